package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/telemetry"
)

// Training job states (docs/maintenance.md section 8).
const (
	jobQueued    = "queued"
	jobRunning   = "running"
	jobCompleted = "completed"
	jobFailed    = "failed"
)

// Training queue bounds: at most maxTrainQueue jobs wait; the latest
// keepFinishedJobs finished ones stay answerable by id.
const (
	maxTrainQueue    = 32
	keepFinishedJobs = 32
)

// cancelledByUser is the error of a job DELETE /v1/train/queue/{id} ended.
const cancelledByUser = "cancelled by user"

// trainJob is one SFT job. Its fields are guarded by the queue's mutex.
type trainJob struct {
	id         string
	cfg        train.Config
	outputName string
	autoLoad   bool
	seqs       []train.Sequence
	tokens     int // tokens of all the examples

	state, errMsg              string
	step, total, epoch         int
	losses                     []float64
	adapter                    string // output name once written
	created, started, finished time.Time
	cancel                     context.CancelFunc // set while running
	cancelled                  bool
}

// trainQueue is the training jobs: the queue, the running job, the
// finished ones, and the counts behind the kiln_training_* families. One
// goroutine (run) works the queue while it is not empty; it exits when the
// queue empties and is started again by the next submission. stop cancels
// everything and waits for it.
type trainQueue struct {
	mu       sync.Mutex
	queued   []*trainJob
	running  *trainJob
	finished []*trainJob
	stats    telemetry.TrainingStats
	stopped  bool
	wg       sync.WaitGroup
	// stepHold, when set (tests), is called inside every step's exclusive
	// hold: a slow step on demand.
	stepHold func()
}

// errTrainQueueFull is the 503 of a submission beyond maxTrainQueue.
func errTrainQueueFull(retry time.Duration) error {
	return &Error{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "training_queue_full",
		Message: fmt.Sprintf("the training queue holds %d jobs; retry later", maxTrainQueue), RetryAfter: retry}
}

// submit queues j and starts the worker when none runs.
func (s *Server) submitTrainJob(j *trainJob) error {
	q := &s.train
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return errStopping
	}
	if len(q.queued) >= maxTrainQueue {
		return errTrainQueueFull(s.cfg.RetryAfter)
	}
	j.state, j.created = jobQueued, time.Now()
	q.queued = append(q.queued, j)
	if q.running == nil && len(q.queued) == 1 {
		q.wg.Add(1)
		go s.workTrainQueue()
	}
	return nil
}

// workTrainQueue runs the queued jobs one at a time until none is left.
func (s *Server) workTrainQueue() {
	q := &s.train
	defer q.wg.Done()
	for {
		q.mu.Lock()
		if len(q.queued) == 0 || q.stopped {
			q.running = nil
			q.stats.Active = false
			q.mu.Unlock()
			return
		}
		j := q.queued[0]
		q.queued = q.queued[1:]
		ctx, cancel := context.WithCancel(context.Background())
		j.state, j.started, j.cancel = jobRunning, time.Now(), cancel
		q.running, q.stats.Active = j, true
		q.mu.Unlock()

		err := s.runTrainJob(ctx, j)
		cancel()

		q.mu.Lock()
		j.finished, j.cancel = time.Now(), nil
		switch {
		case err == nil:
			j.state = jobCompleted
			q.stats.Completed++
		case j.cancelled:
			j.state, j.errMsg = jobFailed, cancelledByUser
			q.stats.Cancelled++
		default:
			j.state, j.errMsg = jobFailed, err.Error()
			q.stats.Failed++
		}
		q.running = nil
		q.finish(j)
		q.mu.Unlock()
	}
}

// finish keeps j among the finished jobs (the latest keepFinishedJobs).
// The caller holds q.mu.
func (q *trainQueue) finish(j *trainJob) {
	q.finished = append(q.finished, j)
	if len(q.finished) > keepFinishedJobs {
		q.finished = slices.Delete(q.finished, 0, len(q.finished)-keepFinishedJobs)
	}
}

// cancelJob cancels job id: a queued job is removed (and ends failed,
// cancelled by user); a running one stops at its next step boundary.
func (s *Server) cancelTrainJob(id string) (*trainJob, error) {
	q := &s.train
	q.mu.Lock()
	defer q.mu.Unlock()
	if i := slices.IndexFunc(q.queued, func(j *trainJob) bool { return j.id == id }); i >= 0 {
		j := q.queued[i]
		q.queued = slices.Delete(q.queued, i, i+1)
		j.state, j.errMsg, j.cancelled, j.finished = jobFailed, cancelledByUser, true, time.Now()
		q.stats.Cancelled++
		q.finish(j)
		return j, nil
	}
	if j := q.running; j != nil && j.id == id {
		j.cancelled = true
		j.cancel()
		return j, nil
	}
	if slices.ContainsFunc(q.finished, func(j *trainJob) bool { return j.id == id }) {
		return nil, &Error{Status: http.StatusConflict, Type: typeInvalidRequest, Param: "id", Code: "training_job_finished",
			Message: fmt.Sprintf("training job %s has already finished", id)}
	}
	return nil, errJobNotFound(id)
}

func errJobNotFound(id string) error {
	return &Error{Status: http.StatusNotFound, Type: typeNotFound, Param: "id", Code: "training_job_not_found",
		Message: fmt.Sprintf("no training job %q (finished jobs are kept for the latest %d)", id, keepFinishedJobs)}
}

// stopTraining cancels the running job, fails the queued ones and waits
// for the worker. Shutdown calls it; it is idempotent.
func (s *Server) stopTraining() {
	q := &s.train
	q.mu.Lock()
	q.stopped = true
	for _, j := range q.queued {
		j.state, j.errMsg, j.finished = jobFailed, "server shutting down", time.Now()
		q.stats.Failed++
		q.finish(j)
	}
	q.queued = nil
	if q.running != nil {
		q.running.cancel()
	}
	q.mu.Unlock()
	q.wg.Wait()
}

// trainingStats is the source of the kiln_training_* families.
func (s *Server) trainingStats() telemetry.TrainingStats {
	s.train.mu.Lock()
	defer s.train.mu.Unlock()
	return s.train.stats
}

// errJobCancelled ends a job's step loop when its context is cancelled.
var errJobCancelled = errors.New("training job cancelled")

// outputDir is where job j's adapter is written: under the adapter dir.
func (s *Server) outputDir(name string) string { return filepath.Join(s.cfg.AdapterDir, name) }
