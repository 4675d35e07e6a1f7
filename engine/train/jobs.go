package train

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/kernels"
)

// Job states (docs/maintenance.md section 8). A job is "swapping" once its
// adapter is written and, with AutoLoad, it waits for the active requests
// to drain so that the barrier can swap the adapter in.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSwapping  = "swapping"
	JobCompleted = "completed"
	JobFailed    = "failed"
)

// Queue bounds: at most MaxQueued jobs wait; the latest KeepFinished
// finished ones stay answerable by id.
const (
	MaxQueued    = 32
	KeepFinished = 32
)

// The runner's errors, plain sentinels the server maps to HTTP.
var (
	ErrQueueFull   = errors.New("the training queue is full")
	ErrJobNotFound = errors.New("training job not found")
	ErrJobFinished = errors.New("training job already finished")
	ErrStopping    = errors.New("the trainer is stopping")
	ErrCancelled   = errors.New("cancelled by user")
)

// Job is one SFT job: its examples, encoded, and its configuration.
type Job struct {
	ID       string
	Config   Config
	Output   string // the adapter's name in the adapter directory
	AutoLoad bool   // swap the adapter in once written
	Seqs     []Sequence

	state, errMsg              string
	step, epoch                int
	losses                     []float64
	adapter                    string
	created, started, finished time.Time
	cancel                     context.CancelFunc
	cancelled                  bool
	// The step in progress, as the worker last published it.
	stepDone, stepTotal, stepSlices int
	inStep                          bool
}

// Steps is the job's optimizer steps: one per example per epoch.
func (j *Job) Steps() int { return j.Config.Epochs * len(j.Seqs) }

// Tokens is the tokens of all the job's examples.
func (j *Job) Tokens() int {
	n := 0
	for _, s := range j.Seqs {
		n += len(s.IDs)
	}
	return n
}

// JobStatus is a job as the status routes report it.
type JobStatus struct {
	ID, State, Error           string
	Position                   int // 1-based among the queued; 0 otherwise
	Step, Steps, Epoch, Epochs int
	Examples                   int
	Losses                     []float64
	Adapter, Output            string // Adapter: once written
	AutoLoad                   bool
	Seed                       uint64
	Created, Started, Finished time.Time
	// While running: the exclusive slice, the current step's progress in
	// work units and its slices so far (HasStep), and the active requests
	// its slices pause.
	Slice                           time.Duration
	HasStep                         bool
	StepDone, StepTotal, StepSlices int
	PausedStreams                   int
	// While swapping: the active requests the swap waits for.
	WaitingRequests int
}

// Stats are the counts behind the kiln_training_* families.
type Stats struct {
	Completed, Failed, Cancelled uint64
	Steps                        uint64
	Active                       bool
}

// Engine is what a training job needs of the serving engine
// (*engine.Engine): operation records, exclusive ownership for each slice
// of a step, its snapshot (the requests a slice pauses) and the barrier
// swap of the auto-loaded adapter.
type Engine interface {
	BeginOperation(kind timing.OpKind, reason string, parent uint64, detail func(*engine.Operation)) *engine.Operation
	EndOperation(op *engine.Operation, err error)
	Exclusive(ctx context.Context, op *engine.Operation, fn func() error) error
	Snapshot() timing.EngineSnapshot
	lora.Swapper
}

// RunnerConfig is what a Runner is built with.
type RunnerConfig struct {
	Engine   Engine
	Model    *llama.Model
	Pool     *kernels.Pool  // the one pool cmd builds; training runs on it only while it holds the engine exclusively
	Adapters *lora.Registry // where adapters are written (its Dir) and activated
	ModelID  string         // the base model's name in a written adapter's config
	// Slice bounds each exclusive hold of a step (--maintenance-slice);
	// zero runs each step in one hold.
	Slice       time.Duration
	StepTimeout time.Duration // one slice's wait for ownership and its work; 0: 10 minutes
	SwapTimeout time.Duration // the auto-load swap's drain; 0: 60 s
	// StepHook, when set (tests), runs inside every slice's exclusive hold.
	StepHook func()
	// UnitCost, when set (tests), runs after each unit of a step with its
	// estimated work (Trainer.SetUnitCost).
	UnitCost func(work int64)
}

// Runner is the training job queue and its worker: jobs run one at a
// time, each step an engine operation held in slices. It is safe for
// concurrent use.
type Runner struct {
	cfg RunnerConfig

	mu       sync.Mutex
	queued   []*Job
	running  *Job
	finished []*Job
	stats    Stats
	stopped  bool
	wg       sync.WaitGroup
}

// NewRunner returns an idle runner.
func NewRunner(cfg RunnerConfig) *Runner {
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = 10 * time.Minute
	}
	if cfg.SwapTimeout <= 0 {
		cfg.SwapTimeout = time.Minute
	}
	return &Runner{cfg: cfg}
}

// Slice is the runner's exclusive slice (0: whole steps).
func (r *Runner) Slice() time.Duration { return r.cfg.Slice }

// Submit queues j and starts the worker when none runs. It fails with
// ErrQueueFull past MaxQueued jobs and ErrStopping once stopped.
func (r *Runner) Submit(j *Job) error {
	if r.cfg.Engine == nil || r.cfg.Model == nil || r.cfg.Pool == nil || r.cfg.Adapters == nil {
		return errors.New("train: the runner is not configured to train")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return ErrStopping
	}
	if len(r.queued) >= MaxQueued {
		return fmt.Errorf("%w: it holds %d jobs; retry later", ErrQueueFull, MaxQueued)
	}
	j.state, j.created = JobQueued, time.Now()
	r.queued = append(r.queued, j)
	if r.running == nil && len(r.queued) == 1 {
		r.wg.Add(1)
		go r.work()
	}
	return nil
}

// work runs the queued jobs one at a time until none is left.
func (r *Runner) work() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		if len(r.queued) == 0 || r.stopped {
			r.running, r.stats.Active = nil, false
			r.mu.Unlock()
			return
		}
		j := r.queued[0]
		r.queued = r.queued[1:]
		ctx, cancel := context.WithCancel(context.Background())
		j.state, j.started, j.cancel = JobRunning, time.Now(), cancel
		r.running, r.stats.Active = j, true
		r.mu.Unlock()

		err := r.runJob(ctx, j)
		cancel()

		r.mu.Lock()
		j.finished, j.cancel, j.inStep = time.Now(), nil, false
		switch {
		case err == nil:
			j.state = JobCompleted
			r.stats.Completed++
		case j.cancelled:
			j.state, j.errMsg = JobFailed, ErrCancelled.Error()
			r.stats.Cancelled++
		default:
			j.state, j.errMsg = JobFailed, err.Error()
			r.stats.Failed++
		}
		r.running = nil
		r.finish(j)
		r.mu.Unlock()
	}
}

// finish keeps j among the finished jobs; r.mu is held.
func (r *Runner) finish(j *Job) {
	r.finished = append(r.finished, j)
	if len(r.finished) > KeepFinished {
		r.finished = slices.Delete(r.finished, 0, len(r.finished)-KeepFinished)
	}
}

// Cancel cancels job id: a queued job is removed (it ends failed,
// cancelled by user); a running one stops at its next slice boundary.
// ErrJobFinished for a finished job, ErrJobNotFound for an unknown one.
func (r *Runner) Cancel(id string) (JobStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.IndexFunc(r.queued, func(j *Job) bool { return j.ID == id }); i >= 0 {
		j := r.queued[i]
		r.queued = slices.Delete(r.queued, i, i+1)
		j.state, j.errMsg, j.cancelled, j.finished = JobFailed, ErrCancelled.Error(), true, time.Now()
		r.stats.Cancelled++
		r.finish(j)
		return r.status(j, 0), nil
	}
	if j := r.running; j != nil && j.ID == id {
		j.cancelled = true
		j.cancel()
		return r.status(j, 0), nil
	}
	if slices.ContainsFunc(r.finished, func(j *Job) bool { return j.ID == id }) {
		return JobStatus{}, fmt.Errorf("%w: training job %s has already finished", ErrJobFinished, id)
	}
	return JobStatus{}, fmt.Errorf("%w: no training job %q (finished jobs are kept for the latest %d)", ErrJobNotFound, id, KeepFinished)
}

// Stop cancels the running job, fails the queued ones and waits for the
// worker. It is idempotent.
func (r *Runner) Stop() {
	r.mu.Lock()
	r.stopped = true
	for _, j := range r.queued {
		j.state, j.errMsg, j.finished = JobFailed, "server shutting down", time.Now()
		r.stats.Failed++
		r.finish(j)
	}
	r.queued = nil
	if r.running != nil {
		r.running.cancel()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// Stats is the source of the kiln_training_* families.
func (r *Runner) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// status describes j (pos: its 1-based queue position, else 0); r.mu is
// held.
func (r *Runner) status(j *Job, pos int) JobStatus {
	s := JobStatus{ID: j.ID, State: j.state, Error: j.errMsg, Position: pos, Step: j.step, Steps: j.Steps(),
		Epoch: j.epoch, Epochs: j.Config.Epochs, Examples: len(j.Seqs), Losses: slices.Clone(j.losses),
		Adapter: j.adapter, Output: j.Output, AutoLoad: j.AutoLoad, Seed: j.Config.Seed,
		Created: j.created, Started: j.started, Finished: j.finished, Slice: r.cfg.Slice}
	if s.Losses == nil {
		s.Losses = []float64{}
	}
	switch j.state {
	case JobRunning:
		s.HasStep, s.StepDone, s.StepTotal, s.StepSlices = j.inStep, j.stepDone, j.stepTotal, j.stepSlices
		s.PausedStreams = r.active()
	case JobSwapping:
		s.WaitingRequests = r.active()
	}
	return s
}

// active is the requests the engine runs now: what a slice pauses and a
// swap waits for.
func (r *Runner) active() int {
	if r.cfg.Engine == nil {
		return 0
	}
	return r.cfg.Engine.Snapshot().Active
}

// Status returns job id, or ErrJobNotFound.
func (r *Runner) Status(id string) (JobStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j := r.running; j != nil && j.ID == id {
		return r.status(j, 0), nil
	}
	for i, j := range r.queued {
		if j.ID == id {
			return r.status(j, i+1), nil
		}
	}
	for _, j := range r.finished {
		if j.ID == id {
			return r.status(j, 0), nil
		}
	}
	return JobStatus{}, fmt.Errorf("%w: no training job %q (finished jobs are kept for the latest %d)", ErrJobNotFound, id, KeepFinished)
}

// Latest returns the running job, else the latest finished one, else the
// first queued one; false when there has been none.
func (r *Runner) Latest() (JobStatus, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.running != nil:
		return r.status(r.running, 0), true
	case len(r.finished) > 0:
		return r.status(r.finished[len(r.finished)-1], 0), true
	case len(r.queued) > 0:
		return r.status(r.queued[0], 1), true
	}
	return JobStatus{}, false
}

// Queue returns the running job (nil: none), the queued ones in order and
// the finished ones, oldest first.
func (r *Runner) Queue() (running *JobStatus, queued, finished []JobStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running != nil {
		s := r.status(r.running, 0)
		running = &s
	}
	queued, finished = []JobStatus{}, []JobStatus{}
	for i, j := range r.queued {
		queued = append(queued, r.status(j, i+1))
	}
	for _, j := range r.finished {
		finished = append(finished, r.status(j, 0))
	}
	return running, queued, finished
}
