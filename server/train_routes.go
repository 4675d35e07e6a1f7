package server

import (
	"net/http"

	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry"
)

// trainQueueBody is the reply of GET /v1/train/queue.
type trainQueueBody struct {
	Object    string    `json:"object"` // "kiln.training_queue"
	Running   *jobJSON  `json:"running"`
	Queued    []jobJSON `json:"queued"`    // in order, with positions from 1
	Completed []jobJSON `json:"completed"` // finished jobs (completed or failed), oldest first
}

// trainQueueRoute serves GET /v1/train/queue.
func (s *Server) trainQueueRoute(w http.ResponseWriter, _ *http.Request) error {
	running, queued, finished := s.training.Queue()
	b := trainQueueBody{Object: "kiln.training_queue", Queued: []jobJSON{}, Completed: []jobJSON{}}
	if running != nil {
		j := jobToJSON(*running)
		b.Running = &j
	}
	for _, j := range queued {
		b.Queued = append(b.Queued, jobToJSON(j))
	}
	for _, j := range finished {
		b.Completed = append(b.Completed, jobToJSON(j))
	}
	return marshalJSON(w, http.StatusOK, b)
}

// trainStatus serves GET /v1/train/status: the running job, else the
// latest finished one, else the first queued one; 404 when there has been
// none.
func (s *Server) trainStatus(w http.ResponseWriter, _ *http.Request) error {
	j, ok := s.training.Latest()
	if !ok {
		return &wire.Error{Status: http.StatusNotFound, Type: wire.TypeNotFound, Code: "training_job_not_found",
			Message: "no training job has been submitted yet (POST /v1/train/sft starts one)"}
	}
	return marshalJSON(w, http.StatusOK, jobToJSON(j))
}

// trainStatusByID serves GET /v1/train/status/{id}.
func (s *Server) trainStatusByID(w http.ResponseWriter, r *http.Request) error {
	j, err := s.training.Status(r.PathValue("id"))
	if err != nil {
		return about("id", err)
	}
	return marshalJSON(w, http.StatusOK, jobToJSON(j))
}

// trainCancel serves DELETE /v1/train/queue/{id}: a queued job is removed
// (it ends failed, "cancelled by user"); a running one stops at its next
// slice boundary and ends so. The reply is the job as it is now.
func (s *Server) trainCancel(w http.ResponseWriter, r *http.Request) error {
	j, err := s.training.Cancel(r.PathValue("id"))
	if err != nil {
		return about("id", err)
	}
	s.log.Info().Str("job_id", j.ID).Str("state", j.State).Msg("training job cancel requested")
	return marshalJSON(w, http.StatusOK, jobToJSON(j))
}

// trainingStats is the source of the kiln_training_* families.
func (s *Server) trainingStats() telemetry.TrainingStats {
	st := s.training.Stats()
	return telemetry.TrainingStats{Completed: st.Completed, Failed: st.Failed, Cancelled: st.Cancelled, Steps: st.Steps, Active: st.Active}
}

// stopTraining stops the runner: the running job is cancelled, the queued
// ones fail. Shutdown calls it; it is idempotent.
func (s *Server) stopTraining() { s.training.Stop() }
