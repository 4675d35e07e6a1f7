package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/schemas"
)

var trainValidator = sync.OnceValues(schemas.NewValidator)

// checkSchema validates a training reply against its definition.
func checkSchema(t *testing.T, def string, body []byte) {
	t.Helper()
	v, err := trainValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(schemas.ObservabilityID, def, body); err != nil {
		t.Errorf("reply does not match %s: %v\n%s", def, err, body)
	}
}

// trainExample is a one-turn conversation for the SFT route.
func trainExample(user, assistant string) map[string]any {
	return map[string]any{"messages": []map[string]any{
		{"role": "user", "content": user}, {"role": "assistant", "content": assistant},
	}}
}

// withTraining points the adapter and training data directories at
// temporary ones.
func withTraining(t *testing.T, dataDir string) harnessOption {
	adapters := t.TempDir()
	return withConfig(func(c *Config) {
		c.AdapterDir = adapters
		c.TrainDataDir = dataDir
	})
}

// submitSFT posts a job and returns its id (failing the test unless 200).
func (h *harness) submitSFT(t *testing.T, body map[string]any) sftReply {
	t.Helper()
	status, _, out := h.do(http.MethodPost, "/v1/train/sft", body, nil)
	if status != http.StatusOK {
		t.Fatalf("POST /v1/train/sft: %d %s", status, out)
	}
	checkSchema(t, "training_submit", out)
	var r sftReply
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if r.State != train.JobQueued || !strings.HasPrefix(r.JobID, "train-") {
		t.Fatalf("reply %+v, want a queued train- job", r)
	}
	return r
}

// waitJob polls the job's status until done(job) or the deadline.
func (h *harness) waitJob(t *testing.T, id string, done func(jobJSON) bool) jobJSON {
	t.Helper()
	var j jobJSON
	waitFor(t, "job "+id, func() bool {
		j = jobJSON{}
		checkSchema(t, "training_job", h.getJSON("/v1/train/status/"+id, &j))
		return done(j)
	})
	return j
}

func finished(j jobJSON) bool { return j.State == train.JobCompleted || j.State == train.JobFailed }

// TestTrainSFTValidation: every bad body is a 400 naming the parameter,
// and nothing is queued.
func TestTrainSFTValidation(t *testing.T) {
	data := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	good := `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"the cat"}]}` + "\n"
	for _, f := range []string{outside, filepath.Join(data, "ok.jsonl")} {
		if err := os.WriteFile(f, []byte(good), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(data, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, withTraining(t, data))
	t.Cleanup(h.srv.stopTraining)
	ex := []any{trainExample("hello", "the cat sat")}
	for _, tc := range []struct {
		name  string
		body  string
		param string
		code  string
	}{
		{"unknown field", `{"examples":[],"bogus":1}`, "bogus", "unknown_field"},
		{"unknown config field", `{"examples":` + toJSON(t, ex) + `,"config":{"lr":1}}`, "config.lr", "unknown_field"},
		{"unknown message field", `{"examples":[{"messages":[{"role":"user","content":"a","x":1}]}]}`, "examples[0].messages[0].x", "unknown_field"},
		{"empty examples", `{"examples":[]}`, "examples", "invalid_value"},
		{"no examples", `{}`, "examples", "invalid_value"},
		{"no assistant turn", `{"examples":[{"messages":[{"role":"user","content":"hi"}]}]}`, "examples[0].messages", "invalid_value"},
		{"rank 0", `{"examples":` + toJSON(t, ex) + `,"config":{"lora_rank":0}}`, "config.lora_rank", "invalid_value"},
		{"negative learning rate", `{"examples":` + toJSON(t, ex) + `,"config":{"learning_rate":-0.001}}`, "config.learning_rate", "invalid_value"},
		{"unknown target", `{"examples":` + toJSON(t, ex) + `,"config":{"target_modules":["q","lm_head"]}}`, "config.target_modules", "invalid_value"},
		{"unknown optimizer", `{"examples":` + toJSON(t, ex) + `,"config":{"optimizer":{"kind":"lion"}}}`, "config.optimizer.kind", "invalid_value"},
		{"unknown optimizer field", `{"examples":` + toJSON(t, ex) + `,"config":{"optimizer":{"momentum":0.9}}}`, "config.optimizer.momentum", "unknown_field"},
		{"n_epochs", `{"examples":` + toJSON(t, ex) + `,"config":{"n_epochs":2}}`, "config.n_epochs", "unknown_field"},
		{"bad output name", `{"examples":` + toJSON(t, ex) + `,"config":{"output_name":"../up"}}`, "config.output_name", "invalid_adapter_name"},
		{"dataset outside the data dir", `{"dataset_path":` + toJSON(t, outside) + `}`, "dataset_path", "dataset_path_outside_data_dir"},
		{"dataset climbing out", `{"dataset_path":"../x.jsonl"}`, "dataset_path", "dataset_path_outside_data_dir"},
		{"dataset through a symlink out", `{"dataset_path":"link.jsonl"}`, "dataset_path", "dataset_path_outside_data_dir"},
		{"dataset missing", `{"dataset_path":"nope.jsonl"}`, "dataset_path", "dataset_not_found"},
		{"examples and dataset", `{"dataset_path":"ok.jsonl","examples":` + toJSON(t, ex) + `}`, "dataset_path", "invalid_value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := h.do(http.MethodPost, "/v1/train/sft", tc.body, nil)
			var e struct {
				Error struct{ Param, Code *string }
			}
			_ = json.Unmarshal(body, &e)
			if status != http.StatusBadRequest || e.Error.Code == nil || *e.Error.Code != tc.code ||
				(tc.param != "" && (e.Error.Param == nil || *e.Error.Param != tc.param)) {
				t.Errorf("%d %s; want 400 %s on %q", status, body, tc.code, tc.param)
			}
			if bytes.Contains(body, []byte("train: ")) {
				t.Errorf("message carries a package prefix: %s", body)
			}
		})
	}
	var q trainQueueBody
	h.getJSON("/v1/train/queue", &q)
	if q.Running != nil || len(q.Queued) != 0 || len(q.Completed) != 0 {
		t.Errorf("bad bodies left jobs behind: %+v", q)
	}
	// A dataset under the directory is accepted.
	r := h.submitSFT(t, map[string]any{"dataset_path": "ok.jsonl", "config": map[string]any{"epochs": 1, "auto_load": false}})
	if j := h.waitJob(t, r.JobID, finished); j.State != train.JobCompleted || len(j.Losses) != 1 {
		t.Errorf("dataset job: %+v", j)
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTrainJobServes: a job on kiln-tiny runs to completion, reports its
// losses step by step, writes the adapter under the adapter dir, swaps it
// in (auto_load) so that the next chat request greedily answers the trained
// conversation's answer (the base model's answer differs), and counts in
// the kiln_training_* families.
func TestTrainJobServes(t *testing.T) {
	h := newHarness(t, withTraining(t, ""))
	t.Cleanup(h.srv.stopTraining)
	const user, answer = "what is the name of the little dog", "the dog is called pepper"
	chat := func() string {
		status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{
			"messages": []map[string]any{{"role": "user", "content": user}}, "max_tokens": 7}), nil)
		if status != http.StatusOK {
			t.Fatalf("chat: %d %s", status, body)
		}
		var r struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if err := json.Unmarshal(body, &r); err != nil || len(r.Choices) != 1 {
			t.Fatalf("chat reply %s: %v", body, err)
		}
		return strings.TrimSpace(r.Choices[0].Message.Content)
	}
	// The answer is 7 tokens ("the" is three: kiln-tiny's word vocabulary
	// has no "the" without a leading space); kiln-tiny's classifier all
	// but rules out its end-of-turn token, so the reply may not stop there.
	if base := chat(); strings.HasPrefix(base, answer) {
		t.Fatalf("the base model already answers %q", base)
	}
	r := h.submitSFT(t, map[string]any{"examples": []any{trainExample(user, answer)}, "config": map[string]any{
		"epochs": 20, "learning_rate": 1e-3, "lora_rank": 8, "lora_alpha": 16, "seed": 7, "output_name": "dog",
		"target_modules": []string{"q", "k", "v", "o", "gate", "up", "down"},
	}})
	if r.EffectiveSeed != 7 {
		t.Errorf("effective_seed %d, want 7", r.EffectiveSeed)
	}
	j := h.waitJob(t, r.JobID, finished)
	if j.State != train.JobCompleted || j.Step != 20 || j.TotalSteps != 20 || j.Epoch != 20 || len(j.Losses) != 20 ||
		j.Adapter == nil || *j.Adapter != "dog" || j.Error != nil || j.FinishedAt == nil {
		t.Fatalf("job %+v", j)
	}
	if !(j.Losses[19] < j.Losses[0]/20) {
		t.Errorf("losses %v: want the last under a twentieth of the first", j.Losses)
	}
	for _, f := range []string{"adapter_config.json", "adapter_model.safetensors"} {
		if _, err := os.Stat(filepath.Join(h.cfg.AdapterDir, "dog", f)); err != nil {
			t.Errorf("adapter file: %v", err)
		}
	}
	var ad adaptersBody
	h.getJSON("/v1/adapters", &ad)
	if ad.Active == nil || *ad.Active != "dog" {
		t.Errorf("active adapter %v, want dog (auto_load)", ad.Active)
	}
	if got := chat(); !strings.HasPrefix(got, answer) {
		t.Errorf("after training the server answers %q, want %q", got, answer)
	}
	for _, m := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"kiln_training_jobs_total", map[string]string{"type": "sft", "status": "completed"}, 1},
		{"kiln_training_jobs_total", map[string]string{"type": "sft", "status": "failed"}, 0},
		{"kiln_training_steps_total", nil, 20},
		{"kiln_training_active", nil, 0},
	} {
		if got := h.metricValue(t, m.family, m.labels); got != m.want {
			t.Errorf("%s%v = %v, want %v", m.family, m.labels, got, m.want)
		}
	}
	// The name is taken now.
	status, _, body := h.do(http.MethodPost, "/v1/train/sft", map[string]any{"examples": []any{trainExample(user, answer)},
		"config": map[string]any{"output_name": "dog"}}, nil)
	if status != http.StatusConflict || !strings.Contains(string(body), "adapter_exists") {
		t.Errorf("second job into dog: %d %s, want 409 adapter_exists", status, body)
	}
}

// TestTrainQueueCancel: one job runs at a time; a queued job is removed by
// DELETE, a running one stops at its next slice and ends failed, "cancelled
// by user"; beyond 32 queued jobs the route answers 503 with Retry-After.
func TestTrainQueueCancel(t *testing.T) {
	h := newHarness(t, withTraining(t, ""))
	t.Cleanup(h.srv.stopTraining)
	hold := make(chan struct{})
	h.setStepHook(func() { <-hold })
	body := func() map[string]any {
		return map[string]any{"examples": []any{trainExample("hello", "the cat sat")},
			"config": map[string]any{"epochs": 1000, "lora_rank": 2, "auto_load": false}}
	}
	run := h.submitSFT(t, body())
	h.waitJob(t, run.JobID, func(j jobJSON) bool { return j.State == train.JobRunning })
	var queued []string
	for range train.MaxQueued {
		queued = append(queued, h.submitSFT(t, body()).JobID)
	}
	status, hdr, out := h.do(http.MethodPost, "/v1/train/sft", body(), nil)
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(string(out), "training_queue_full") {
		t.Errorf("33rd queued job: %d (Retry-After %q) %s; want 503 training_queue_full with Retry-After", status, hdr.Get("Retry-After"), out)
	}
	var q trainQueueBody
	checkSchema(t, "training_queue", h.getJSON("/v1/train/queue", &q))
	if q.Running == nil || q.Running.JobID != run.JobID || len(q.Queued) != train.MaxQueued || *q.Queued[4].Position != 5 || q.Queued[4].JobID != queued[4] {
		t.Fatalf("queue: running %v, %d queued", q.Running, len(q.Queued))
	}
	// Cancel a queued job: removed at once.
	status, _, out = h.do(http.MethodDelete, "/v1/train/queue/"+queued[4], nil, nil)
	if status != http.StatusOK || !strings.Contains(string(out), train.ErrCancelled.Error()) {
		t.Errorf("cancel queued: %d %s", status, out)
	}
	checkSchema(t, "training_job", out)
	h.getJSON("/v1/train/queue", &q)
	if len(q.Queued) != train.MaxQueued-1 || *q.Queued[4].Position != 5 || q.Queued[4].JobID != queued[5] {
		t.Errorf("after the cancel: %d queued, 5th is %s", len(q.Queued), q.Queued[4].JobID)
	}
	// Cancel the rest, then the running job, which is inside a step.
	for _, id := range append(queued[:4:4], queued[5:]...) {
		if status, _, out := h.do(http.MethodDelete, "/v1/train/queue/"+id, nil, nil); status != http.StatusOK {
			t.Fatalf("cancel %s: %d %s", id, status, out)
		}
	}
	if status, _, out := h.do(http.MethodDelete, "/v1/train/queue/"+run.JobID, nil, nil); status != http.StatusOK {
		t.Fatalf("cancel running: %d %s", status, out)
	}
	close(hold) // the step in progress finishes; no other starts
	j := h.waitJob(t, run.JobID, finished)
	// It stops at the slice boundary after the held slice: its first step
	// ends there unless that slice finished it.
	if j.State != train.JobFailed || j.Error == nil || *j.Error != train.ErrCancelled.Error() || j.Step > 1 {
		t.Errorf("cancelled running job: %+v; want failed, cancelled by user, within its first step", j)
	}
	if got := h.metricValue(t, "kiln_training_jobs_total", map[string]string{"type": "sft", "status": "cancelled"}); got != train.MaxQueued+1 {
		t.Errorf("cancelled jobs %v, want %d", got, train.MaxQueued+1)
	}
	if status, _, out := h.do(http.MethodDelete, "/v1/train/queue/"+run.JobID, nil, nil); status != http.StatusConflict {
		t.Errorf("cancel of a finished job: %d %s, want 409", status, out)
	}
	if status, _, _ := h.do(http.MethodDelete, "/v1/train/queue/train-nope", nil, nil); status != http.StatusNotFound {
		t.Errorf("cancel of an unknown job: %d, want 404", status)
	}
}
