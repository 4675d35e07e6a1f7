package server

import (
	"sync"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// recentRecord is one completed chat request in the recent-requests ring
// (docs/http-api.md#get-v1statsrecent-requests). Prompt and completion text are kept only when text
// capture is on; otherwise they serialize as null.
type recentRecord struct {
	id               string
	time             time.Time // wall clock, when the request ended
	model            string
	promptTokens     int
	completionTokens int
	durationMs       float64
	streamed         bool
	finishReason     string
	adapterUsed      string // the adapter the request ran with, or "base"
	latency          latency.Summary
	prefix           engine.PrefixUse    // what the prompt took from the prefix cache
	constraint       *wire.ConstraintUse // the grammar the output was held to, nil for none
	hasText          bool
	prompt           string
	completion       string

	seq  uint64    // the engine identity (telemetry request id) other requests' blockers name
	diag diagnosis // served by GET /v1/stats/recent-requests/{id} only
}

// record is the request's entry; ended is its end (the record's wall
// time) and totalMs receipt to end.
func (x *exchange) record(finish string, ended time.Time, totalMs float64, sum latency.Summary) recentRecord {
	rec := recentRecord{
		id:               x.ID,
		time:             ended.UTC(),
		model:            x.s.modelID,
		promptTokens:     x.PromptLen,
		completionTokens: x.Completion,
		durationMs:       totalMs,
		streamed:         x.req.Stream,
		finishReason:     finish,
		adapterUsed:      lora.Name(x.req.adapter),
		latency:          sum,
		prefix:           x.Prefix,
		constraint:       x.constraintUse(finish),
		seq:              x.treq.ID(),
		diag:             x.diag.finish(sum.StallThresholdMs, resolvers{request: x.s.recent.resolve, operation: x.s.tel.OperationRecord}),
	}
	if x.captureText {
		rec.hasText = true
		for i, m := range x.req.Messages {
			if i > 0 {
				rec.prompt += "\n"
			}
			rec.prompt += m.Role + ": " + m.Content
		}
		rec.completion = x.Text.String()
	}
	return rec
}

func (r *recentRecord) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = wire.AppendJSONString(b, r.id)
	b = append(b, `,"time":`...)
	b = wire.AppendJSONString(b, r.time.Format(time.RFC3339Nano))
	b = append(b, `,"model":`...)
	b = wire.AppendJSONString(b, r.model)
	b = append(b, `,"prompt_tokens":`...)
	b = wire.AppendInt(b, int64(r.promptTokens))
	b = append(b, `,"completion_tokens":`...)
	b = wire.AppendInt(b, int64(r.completionTokens))
	b = append(b, `,"duration_ms":`...)
	b = latency.AppendFloat(b, r.durationMs)
	b = append(b, `,"streamed":`...)
	if r.streamed {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	b = append(b, `,"finish_reason":`...)
	b = wire.AppendJSONString(b, r.finishReason)
	b = append(b, `,"adapter_used":`...)
	b = wire.AppendJSONString(b, r.adapterUsed)
	b = append(b, `,"latency":`...)
	b = r.latency.AppendJSON(b)
	b = append(b, `,"prefix_cache":`...)
	b = wire.AppendPrefixCache(b, r.prefix)
	b = append(b, `,"constraint":`...)
	b = r.constraint.AppendJSON(b)
	b = append(b, `,"prompt":`...)
	if r.hasText {
		b = wire.AppendJSONString(b, r.prompt)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"completion":`...)
	if r.hasText {
		b = wire.AppendJSONString(b, r.completion)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// recentRing is a bounded ring of the newest completed requests. A nil
// ring (capacity 0) records nothing.
//
// It also knows the public id of every request in flight (begin), so that
// a record can name the requests whose prefill stalled it, whether they
// have ended or not.
type recentRing struct {
	mu       sync.Mutex
	buf      []recentRecord
	next     int // index of the slot the next record goes to
	n        int
	inFlight map[uint64]string // engine identity -> public id, from begin to add
}

func newRecentRing(capacity int) *recentRing {
	if capacity <= 0 {
		return nil
	}
	return &recentRing{buf: make([]recentRecord, capacity), inFlight: make(map[uint64]string)}
}

// begin notes a started request's identities; add forgets them.
func (q *recentRing) begin(seq uint64, id string) {
	if q == nil || seq == 0 {
		return
	}
	q.mu.Lock()
	q.inFlight[seq] = id
	q.mu.Unlock()
}

func (q *recentRing) add(r recentRecord) {
	if q == nil {
		return
	}
	q.mu.Lock()
	delete(q.inFlight, r.seq)
	q.buf[q.next] = r
	q.next = (q.next + 1) % len(q.buf)
	q.n = min(q.n+1, len(q.buf))
	// Only the newest diagDetailRecords keep their token rows.
	if q.n > diagDetailRecords {
		old := &q.buf[(q.next-1-diagDetailRecords+len(q.buf))%len(q.buf)].diag
		if old.tokens != nil {
			old.tokens, old.tokensReleased = nil, true
		}
	}
	q.mu.Unlock()
}

// resolve returns the public id of the request with engine identity seq:
// in flight, or still in the ring; "" when unknown.
func (q *recentRing) resolve(seq uint64) string {
	if q == nil || seq == 0 {
		return ""
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if id, ok := q.inFlight[seq]; ok {
		return id
	}
	for i := range q.n {
		if r := &q.buf[(q.next-1-i+len(q.buf))%len(q.buf)]; r.seq == seq {
			return r.id
		}
	}
	return ""
}

// find returns the record with public id id.
func (q *recentRing) find(id string) (recentRecord, bool) {
	if q == nil {
		return recentRecord{}, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := range q.n {
		if r := &q.buf[(q.next-1-i+len(q.buf))%len(q.buf)]; r.id == id {
			return *r, true
		}
	}
	return recentRecord{}, false
}

// newestFirst returns a copy of the records, newest first.
func (q *recentRing) newestFirst() []recentRecord {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]recentRecord, 0, q.n)
	for i := 1; i <= q.n; i++ {
		out = append(out, q.buf[(q.next-i+len(q.buf))%len(q.buf)])
	}
	return out
}

func (q *recentRing) capacity() int {
	if q == nil {
		return 0
	}
	return len(q.buf)
}
