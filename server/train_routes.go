package server

import (
	"net/http"
	"slices"
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
	q := &s.train
	q.mu.Lock()
	b := trainQueueBody{Object: "kiln.training_queue", Queued: []jobJSON{}, Completed: []jobJSON{}}
	if q.running != nil {
		j := q.running.toJSON()
		b.Running = &j
	}
	for i, j := range q.queued {
		v := j.toJSON()
		v.Position = new(i + 1)
		b.Queued = append(b.Queued, v)
	}
	for _, j := range q.finished {
		b.Completed = append(b.Completed, j.toJSON())
	}
	q.mu.Unlock()
	return marshalJSON(w, http.StatusOK, b)
}

// trainStatus serves GET /v1/train/status: the running job, else the
// latest finished one, else the first queued one; 404 when there has been
// none.
func (s *Server) trainStatus(w http.ResponseWriter, _ *http.Request) error {
	q := &s.train
	q.mu.Lock()
	var j *trainJob
	switch {
	case q.running != nil:
		j = q.running
	case len(q.finished) > 0:
		j = q.finished[len(q.finished)-1]
	case len(q.queued) > 0:
		j = q.queued[0]
	}
	if j == nil {
		q.mu.Unlock()
		return errJobNotFound("")
	}
	v := j.toJSON()
	q.mu.Unlock()
	return marshalJSON(w, http.StatusOK, v)
}

// trainStatusByID serves GET /v1/train/status/{id}.
func (s *Server) trainStatusByID(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	q := &s.train
	q.mu.Lock()
	var j *trainJob
	for _, c := range slices.Concat(q.queued, q.finished, []*trainJob{q.running}) {
		if c != nil && c.id == id {
			j = c
		}
	}
	if j == nil {
		q.mu.Unlock()
		return errJobNotFound(id)
	}
	v := j.toJSON()
	q.mu.Unlock()
	return marshalJSON(w, http.StatusOK, v)
}

// trainCancel serves DELETE /v1/train/queue/{id}: a queued job is removed
// (it ends failed, "cancelled by user"); a running one stops at its next
// step boundary and ends so. The reply is the job as it is now.
func (s *Server) trainCancel(w http.ResponseWriter, r *http.Request) error {
	j, err := s.cancelTrainJob(r.PathValue("id"))
	if err != nil {
		return err
	}
	s.train.mu.Lock()
	v := j.toJSON()
	s.train.mu.Unlock()
	s.log.Info().Str("job_id", v.JobID).Str("state", v.State).Msg("training job cancel requested")
	return marshalJSON(w, http.StatusOK, v)
}
