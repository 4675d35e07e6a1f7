package server

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/server/wire"
)

// sftBody is the body of POST /v1/train/sft (docs/maintenance.md section 8):
// examples inline or a dataset_path under --train-data-dir, and the job's
// configuration. Unknown fields are a 400.
type sftBody struct {
	Examples    []train.Example `json:"examples"`
	DatasetPath *string         `json:"dataset_path"`
	Config      *sftConfig      `json:"config"`
}

// sftConfig is the config object: every field optional.
type sftConfig struct {
	Epochs        *int                   `json:"epochs"`
	LearningRate  *float64               `json:"learning_rate"`
	LoraRank      *int                   `json:"lora_rank"`
	LoraAlpha     *float64               `json:"lora_alpha"`
	TargetModules []string               `json:"target_modules"`
	Optimizer     *train.OptimizerConfig `json:"optimizer"`
	OutputName    *string                `json:"output_name"`
	AutoLoad      *bool                  `json:"auto_load"`
	Seed          *uint64                `json:"seed"`
}

// sftReply is the reply of POST /v1/train/sft.
type sftReply struct {
	JobID         string `json:"job_id"`
	State         string `json:"state"`
	EffectiveSeed uint64 `json:"effective_seed"`
	Message       string `json:"message"`
}

// trainSFT serves POST /v1/train/sft: the body is validated and every
// conversation rendered and tokenized now (so a bad one is a 400, not a
// failed job), then the job is queued.
func (s *Server) trainSFT(w http.ResponseWriter, r *http.Request) error {
	var body sftBody
	if err := decodeStrict(r, &body, false); err != nil {
		return err
	}
	j, err := s.newTrainJob(body)
	if err != nil {
		return err
	}
	if err := s.training.Submit(j); err != nil {
		return err
	}
	s.log.Info().Str("job_id", j.ID).Int("examples", len(j.Seqs)).Int("steps", j.Steps()).Msg("training job queued")
	return marshalJSON(w, http.StatusOK, sftReply{JobID: j.ID, State: train.JobQueued, EffectiveSeed: j.Config.Seed,
		Message: fmt.Sprintf("queued: %d steps (%d examples x %d epochs); the adapter will be %s", j.Steps(), len(j.Seqs), j.Config.Epochs, j.Output)})
}

// newTrainJob validates body into a job.
func (s *Server) newTrainJob(body sftBody) (*train.Job, error) {
	exs, err := s.sftExamples(body)
	if err != nil {
		return nil, err
	}
	j := &train.Job{ID: newJobID(), AutoLoad: true}
	if j.Config, err = sftTrainConfig(body.Config); err != nil {
		return nil, err
	}
	j.Output = "sft-" + strings.TrimPrefix(j.ID, "train-")[:8]
	if c := body.Config; c != nil && c.AutoLoad != nil {
		j.AutoLoad = *c.AutoLoad
	}
	if c := body.Config; c != nil && c.OutputName != nil {
		j.Output = *c.OutputName
	}
	if err := about("config.output_name", lora.CheckName(j.Output)); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(s.cfg.AdapterDir, j.Output)); err == nil {
		return nil, &wire.Error{Status: http.StatusConflict, Type: wire.TypeInvalidRequest, Param: "config.output_name", Code: "adapter_exists",
			Message: fmt.Sprintf("an adapter named %q already exists in the adapter directory; choose another output_name", j.Output)}
	}
	enc := train.Encoder{Template: s.tmpl, Tokenizer: s.tok}
	seqLen := s.model.Model.Config.SeqLen
	for i, ex := range exs {
		param := fmt.Sprintf("examples[%d].messages", i)
		enc.Tools = ex.ToolSpecs()
		seq, err := enc.Encode(ex.Chat())
		if err != nil {
			return nil, wire.Invalid(param, "invalid_value", "%s", trainMessage(err))
		}
		if len(seq.IDs) > seqLen {
			return nil, wire.Invalid(param, "context_length_exceeded", "the conversation is %d tokens; the model's context is %d", len(seq.IDs), seqLen)
		}
		j.Seqs = append(j.Seqs, seq)
	}
	return j, nil
}

// sftExamples returns the inline examples or reads dataset_path, checking
// each conversation.
func (s *Server) sftExamples(body sftBody) ([]train.Example, error) {
	if body.DatasetPath != nil {
		if body.Examples != nil {
			return nil, wire.Invalid("dataset_path", "invalid_value", "give examples or dataset_path, not both")
		}
		return s.readDataset(*body.DatasetPath)
	}
	if len(body.Examples) == 0 {
		return nil, wire.Invalid("examples", "invalid_value", "examples is empty or absent: give at least one conversation (or dataset_path)")
	}
	for i, ex := range body.Examples {
		if err := ex.Validate(); err != nil {
			return nil, wire.Invalid(fmt.Sprintf("examples[%d].messages", i), "invalid_value", "%s", trainMessage(err))
		}
	}
	return body.Examples, nil
}

// readDataset reads a JSONL dataset that must lie under --train-data-dir
// (symbolic links resolved, so none leads outside it).
func (s *Server) readDataset(p string) ([]train.Example, error) {
	if s.cfg.TrainDataDir == "" {
		return nil, wire.Invalid("dataset_path", "dataset_path_disabled", "dataset_path needs the server started with --train-data-dir")
	}
	root, err := filepath.EvalSymlinks(s.cfg.TrainDataDir)
	if err != nil {
		return nil, &wire.Error{Status: http.StatusInternalServerError, Type: wire.TypeServer, Message: "the training data directory is unavailable", Err: err}
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	outside := wire.Invalid("dataset_path", "dataset_path_outside_data_dir", "dataset_path must name a file under the training data directory")
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && within(root, filepath.Clean(p)) {
			return nil, wire.Invalid("dataset_path", "dataset_not_found", "no such dataset under the training data directory")
		}
		return nil, outside
	}
	if !within(root, real) {
		return nil, outside
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, wire.Invalid("dataset_path", "dataset_not_found", "the dataset cannot be opened")
	}
	defer func() { _ = f.Close() }()
	exs, err := train.ReadJSONL(f)
	if err != nil {
		return nil, wire.Invalid("dataset_path", "invalid_dataset", "%s", trainMessage(err))
	}
	return exs, nil
}

// within reports whether p is root or lies below it (both absolute, clean).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// sftTrainConfig applies c over section 8's defaults and validates it; a
// missing seed is drawn at random (the reply's effective_seed).
func sftTrainConfig(c *sftConfig) (train.Config, error) {
	cfg := train.DefaultConfig()
	cfg.Seed = randomSeed()
	if c == nil {
		return cfg, nil
	}
	if c.Epochs != nil {
		cfg.Epochs = *c.Epochs
	}
	if c.LearningRate != nil {
		cfg.LearningRate = *c.LearningRate
	}
	if c.LoraRank != nil {
		cfg.LoraRank = *c.LoraRank
	}
	if c.LoraAlpha != nil {
		cfg.LoraAlpha = *c.LoraAlpha
	}
	if c.TargetModules != nil {
		cfg.TargetModules = c.TargetModules
	}
	if c.Optimizer != nil {
		cfg.Optimizer = *c.Optimizer
	}
	if c.Seed != nil {
		cfg.Seed = *c.Seed
	}
	if err := cfg.Validate(); err != nil {
		var fe *train.FieldError
		if errors.As(err, &fe) {
			return cfg, wire.Invalid("config."+fe.Field, "invalid_value", "config.%s: %s", fe.Field, fe.Msg)
		}
		return cfg, wire.Invalid("config", "invalid_value", "%v", err)
	}
	return cfg, nil
}

func newJobID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "train-" + hex.EncodeToString(b[:])
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) >> 11 // exact in a JSON number
}

// jobJSON is a job in the replies of the status and queue routes
// (schemas/kiln-training-v1.schema.json).
type jobJSON struct {
	Object        string    `json:"object"` // "kiln.training_job"
	JobID         string    `json:"job_id"`
	Type          string    `json:"type"` // "sft"
	State         string    `json:"state"`
	Position      *int      `json:"position"` // 1-based, queued jobs in the queue listing; else null
	Step          int       `json:"step"`
	TotalSteps    int       `json:"total_steps"`
	Epoch         int       `json:"epoch"`
	Epochs        int       `json:"epochs"`
	Examples      int       `json:"examples"`
	Losses        []float64 `json:"losses"`
	Adapter       *string   `json:"adapter"`
	OutputName    string    `json:"output_name"`
	AutoLoad      bool      `json:"auto_load"`
	EffectiveSeed uint64    `json:"effective_seed"`
	Error         *string   `json:"error"`
	CreatedAt     string    `json:"created_at"`
	StartedAt     *string   `json:"started_at"`
	FinishedAt    *string   `json:"finished_at"`
	// SliceMs is the bound of each exclusive hold of a step
	// (--maintenance-slice; 0: whole steps).
	SliceMs float64 `json:"slice_ms"`
	// StepProgress is the running step's work units done of total; null
	// between steps and when not running.
	StepProgress *stepProgressJSON `json:"step_progress"`
	// PausedStreams is, while running, the active requests each slice
	// pauses; null otherwise.
	PausedStreams *int `json:"paused_streams"`
	// WaitingRequests is, while swapping (the adapter written, waiting for
	// the barrier), the active requests the swap waits for; null otherwise.
	WaitingRequests *int `json:"waiting_requests"`
}

// stepProgressJSON is a running step's progress.
type stepProgressJSON struct {
	Done   int `json:"done"`
	Total  int `json:"total"`
	Slices int `json:"slices"`
}

// jobToJSON describes a job's status.
func jobToJSON(j train.JobStatus) jobJSON {
	ts := func(t time.Time) *string {
		if t.IsZero() {
			return nil
		}
		v := t.UTC().Format(time.RFC3339Nano)
		return &v
	}
	out := jobJSON{Object: "kiln.training_job", JobID: j.ID, Type: "sft", State: j.State, Step: j.Step,
		TotalSteps: j.Steps, Epoch: j.Epoch, Epochs: j.Epochs, Examples: j.Examples,
		Losses: j.Losses, OutputName: j.Output, AutoLoad: j.AutoLoad,
		EffectiveSeed: j.Seed, CreatedAt: *ts(j.Created), StartedAt: ts(j.Started), FinishedAt: ts(j.Finished),
		SliceMs: timing.Ms(j.Slice)}
	if j.Position > 0 {
		out.Position = new(j.Position)
	}
	if j.Adapter != "" {
		out.Adapter = new(j.Adapter)
	}
	if j.Error != "" {
		out.Error = new(j.Error)
	}
	switch j.State {
	case train.JobRunning:
		out.PausedStreams = new(j.PausedStreams)
		if j.HasStep {
			out.StepProgress = &stepProgressJSON{Done: j.StepDone, Total: j.StepTotal, Slices: j.StepSlices}
		}
	case train.JobSwapping:
		out.WaitingRequests = new(j.WaitingRequests)
	}
	return out
}

// trainMessage is an engine/train error as a client reads it: without the
// package's "train: " prefix, which names our code, not their request.
func trainMessage(err error) string { return strings.TrimPrefix(err.Error(), "train: ") }
