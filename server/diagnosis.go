package server

import (
	"sync"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// The Latency diagnosis data of one request: what the dashboard needs to
// answer "why was this token late?" beyond the summary. The handler fills
// a diagRecorder per token (no allocation once its pooled buffer has
// grown); at the end it becomes the record's diagnosis, served by GET
// /v1/stats/recent-requests/{id} (diagnosis_json.go).
//
// Bounds: the token rows are the newest latency.MaxRetainedGaps tokens (the
// gaps the summary is computed over), 48 bytes each; only the newest
// diagDetailRecords records of the ring keep them (older ones keep their
// stalls). Stall candidates (gaps of at least latency.StallThreshold, the
// floor of every stall threshold) are the newest maxStallRows, each with
// the token's blockers (at most engine.MaxBlockers).

// maxStallRows bounds the stalled gaps a record keeps.
const maxStallRows = 256

// diagDetailRecords is how many of the newest records keep their token rows.
const diagDetailRecords = 64

// tokenRow is one token's timing, compact: the 14 fields of its
// kiln.token_timing event are rebuilt from it (tokenRow.event).
type tokenRow struct {
	readyMs  float64 // since receipt
	rdMs     float64 // Response delivery: ready to producer delivered
	hqMs     float64 // handler queue: producer delivered to handler received
	cdMs     float64 // body enqueue: handler received to body enqueued
	blockMs  float64 // the blocking candidate's duration
	id       int32
	reason   latency.Reason
	hasBlock bool
}

func newTokenRow(e *latency.TokenEvent) tokenRow {
	return tokenRow{
		readyMs: e.ReadyMs,
		rdMs:    e.ResponseDeliveryMs, hqMs: e.HandlerQueueMs, cdMs: e.ClientDeliveryMs,
		blockMs: e.BlockingPhaseMs,
		id:      int32(e.ID), reason: e.BlockingPhase, hasBlock: e.HasBlocking,
	}
}

// event rebuilds the token's kiln.token_timing event (index is its
// token_index): the durations are the event's own; the instants after
// ready are sums of them (equal to the event's up to float rounding).
func (r *tokenRow) event(index int) latency.TokenEvent {
	rd, hq, cd := r.rdMs, r.hqMs, r.cdMs
	return latency.TokenEvent{
		Index: index, ID: int(r.id),
		ReadyMs:             r.readyMs,
		ProducerDeliveredMs: r.readyMs + rd,
		HandlerReceivedMs:   r.readyMs + rd + hq,
		BodyEnqueuedMs:      r.readyMs + rd + hq + cd,
		ResponseDeliveryMs:  rd, HandlerQueueMs: hq, QueueDelayMs: rd + hq, ClientDeliveryMs: cd,
		HasBlocking: r.hasBlock, BlockingPhase: r.reason, BlockingPhaseMs: r.blockMs,
	}
}

// blockerRow is one identified piece of work inside a stalled gap.
type blockerRow struct {
	kind          latency.BlockerKind
	request       uint64 // engine identity of the prefilled request (0 for a lock wait)
	requestID     string // its public id, resolved when the record is made ("" when unknown)
	self          bool   // the stalled request's own prefill
	op            uint64 // the operation's identity (BlockerOperation; for a lock wait, the one that held longest inside it)
	opRec         *telemetry.MaintenanceRecord
	startOffsetMs float64
	durationMs    float64
}

// stallRow is one gap of at least the fixed stall floor, with its
// attribution and blockers.
type stallRow struct {
	index       int // the token the gap ended at
	gapMs       float64
	reason      latency.Reason
	candidateMs float64
	blockers    []blockerRow
}

// diagnosis is what a record keeps for the Latency diagnosis.
type diagnosis struct {
	firstIndex     int          // token index of tokens[0]
	tokens         []tokenRow   // nil once the record is old (diagDetailRecords)
	stalls         []stallRow   // gaps >= the record's stall threshold, oldest first
	stallsDropped  int          // stall candidates beyond maxStallRows
	queuedBehind   []blockerRow // the barrier operations the request waited behind for admission
	ownPrefillMs   latency.NullFloat
	tokensReleased bool
}

var tokenRowPool = sync.Pool{New: func() any { return new([]tokenRow) }}

// diagRecorder collects a request's diagnosis in the handler goroutine.
type diagRecorder struct {
	buf     *[]tokenRow // pooled; a ring once full
	head    int         // oldest row when full
	n       int         // tokens observed
	stalls  []stallRow
	dropped int
	own     latency.NullFloat
	queued  []blockerRow // the first token's operation blockers
}

// observe records one token: its row, and for a gap of at least the stall
// floor, the gap's attribution and blockers (this path allocates; stalls
// are rare by definition). received is the request's receipt.
func (d *diagRecorder) observe(e *latency.TokenEvent, phases *timing.Phases, blockers []latency.Blocker, self uint64, received time.Time) {
	if d.buf == nil {
		d.buf = tokenRowPool.Get().(*[]tokenRow)
		*d.buf = (*d.buf)[:0]
	}
	row := newTokenRow(e)
	if len(*d.buf) < latency.MaxRetainedGaps {
		*d.buf = append(*d.buf, row)
	} else {
		(*d.buf)[d.head] = row
		d.head = (d.head + 1) % len(*d.buf)
	}
	if d.n == 0 {
		d.own = latency.Float(timing.Ms(max(phases.Prefill, 0)))
		for i := range blockers {
			if b := &blockers[i]; b.Kind == latency.BlockerOperation {
				d.queued = append(d.queued, blockerRow{kind: b.Kind, op: b.Op,
					startOffsetMs: timing.Ms(b.Start.Sub(received)), durationMs: timing.Ms(b.Duration())})
			}
		}
	}
	d.n++
	if e.Stall() {
		d.stall(e, blockers, self, received)
	}
}

func (d *diagRecorder) stall(e *latency.TokenEvent, blockers []latency.Blocker, self uint64, received time.Time) {
	s := stallRow{index: e.Index, gapMs: timing.Ms(e.Gap.Gap), reason: e.Gap.Reason, candidateMs: timing.Ms(e.Gap.Candidate)}
	for i := range blockers {
		b := &blockers[i]
		s.blockers = append(s.blockers, blockerRow{
			kind: b.Kind, request: b.Request, self: b.Kind == latency.BlockerPrefill && b.Request == self, op: b.Op,
			startOffsetMs: timing.Ms(b.Start.Sub(received)), durationMs: timing.Ms(b.Duration()),
		})
	}
	nameLockWaits(s.blockers, blockers)
	if len(d.stalls) == maxStallRows {
		copy(d.stalls, d.stalls[1:])
		d.stalls = d.stalls[:maxStallRows-1]
		d.dropped++
	}
	d.stalls = append(d.stalls, s)
}

// nameLockWaits gives each lock-wait row the operation that held the
// device longest inside its wait, among the gap's operation blockers bs.
func nameLockWaits(rows []blockerRow, bs []latency.Blocker) {
	for i := range rows {
		if rows[i].kind != latency.BlockerLockWait {
			continue
		}
		w, best := &bs[i], time.Duration(0)
		for j := range bs {
			b := &bs[j]
			if b.Kind == latency.BlockerOperation && !b.Start.Before(w.Start) && !b.End.After(w.End) && b.Duration() > best {
				rows[i].op, best = b.Op, b.Duration()
			}
		}
	}
}

// resolvers name the identities a diagnosis record's blockers carry: the
// public id of a request, the record of an operation.
type resolvers struct {
	request   func(uint64) string
	operation func(uint64) (telemetry.MaintenanceRecord, bool)
}

// name resolves the requests and operations rows name.
func (res resolvers) name(rows []blockerRow) {
	for i := range rows {
		b := &rows[i]
		if b.kind == latency.BlockerPrefill && b.request != 0 && res.request != nil {
			b.requestID = res.request(b.request)
		}
		if b.op != 0 && res.operation != nil {
			if r, ok := res.operation(b.op); ok {
				b.opRec = &r
			}
		}
	}
}

// finish returns the diagnosis for a request whose stall threshold is
// thresholdMs (null: no gap), naming each prefill blocker's request and
// each operation with res, and returns the pooled buffer. The recorder is
// empty afterwards.
func (d *diagRecorder) finish(thresholdMs latency.NullFloat, res resolvers) diagnosis {
	out := diagnosis{ownPrefillMs: d.own, stallsDropped: d.dropped, queuedBehind: d.queued}
	res.name(out.queuedBehind)
	if d.buf != nil {
		rows := *d.buf
		out.tokens = make([]tokenRow, 0, len(rows))
		out.tokens = append(out.tokens, rows[d.head:]...)
		out.tokens = append(out.tokens, rows[:d.head]...)
		out.firstIndex = d.n - len(rows)
		*d.buf = rows[:0]
		tokenRowPool.Put(d.buf)
	}
	for _, s := range d.stalls {
		if !thresholdMs.Valid || s.gapMs < thresholdMs.V || s.index < out.firstIndex {
			continue // below this request's threshold, or its gap was evicted from the summary's ring
		}
		res.name(s.blockers)
		out.stalls = append(out.stalls, s)
	}
	*d = diagRecorder{}
	return out
}
