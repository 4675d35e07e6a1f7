package latency

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// Rolling window defaults (docs/latency-guide.md#the-rolling-decode-endpoint).
const (
	WindowSpan            = 60 * time.Second
	DefaultWindowCapacity = 1 << 16
)

// Window is the rolling 60 s window of request-local gaps behind
// GET /v1/stats/decode: a ring of the newest capacity gaps, of which Stats
// counts those younger than 60 s. Time is always passed in, never read, so
// tests drive it with a fake clock.
//
// Add runs once per token and must never wait behind a reader (a scrape or
// a dashboard poll copies up to 65,536 entries), so the ring takes no lock:
// Add claims the next index with one atomic add and writes its entry under
// a per-entry sequence number (odd while being written, 2(i+1) once entry
// i is complete); Stats copies the entries without blocking anyone and
// skips an entry whose sequence changed during its read (overwritten by a
// newer Add, which is then as young as the read itself). Two Adds a whole
// ring apart writing one entry at once could mix their fields; both are
// valid gaps, so the worst case is one sample attributed to the other's
// instant. Adds serialize only on the first call, which sets the epoch.
type Window struct {
	span    time.Duration
	ring    []windowEntry
	next    atomic.Uint64             // entries ever claimed
	epoch   atomic.Pointer[time.Time] // &ep once the first Add set it
	epochMu sync.Mutex                // guards ep's single write
	ep      time.Time                 // instant of the first Add; entry times are offsets from it

	midStats func() // test hook: called once in the middle of Stats' copy
}

// windowEntry is one gap of the ring; every field is read and written
// atomically.
type windowEntry struct {
	seq atomic.Uint64 // 2(i+1) when entry i is complete, odd while written
	at  atomic.Int64  // offset from the epoch, ns
	val atomic.Int64  // gap ns << 8 | reason
}

// maxWindowGap bounds a stored gap so that it fits beside the reason.
const maxWindowGap = time.Duration(1<<55 - 1)

// NewWindow returns a 60 s window holding at most capacity gaps
// (DefaultWindowCapacity when capacity <= 0).
func NewWindow(capacity int) *Window {
	if capacity <= 0 {
		capacity = DefaultWindowCapacity
	}
	return &Window{span: WindowSpan, ring: make([]windowEntry, capacity)}
}

// Add records a gap that ended at now (the token's ready instant). It
// takes no lock after the first call and does not allocate.
func (w *Window) Add(now time.Time, gap time.Duration, r Reason) {
	ep := w.epoch.Load()
	if ep == nil {
		ep = w.setEpoch(now)
	}
	i := w.next.Add(1) - 1
	e := &w.ring[i%uint64(len(w.ring))]
	e.seq.Store(2*i + 1)
	e.at.Store(int64(now.Sub(*ep)))
	e.val.Store(int64(min(max(gap, 0), maxWindowGap))<<8 | int64(r))
	e.seq.Store(2*i + 2)
}

// setEpoch sets the epoch to now unless another Add did first, and
// returns it.
func (w *Window) setEpoch(now time.Time) *time.Time {
	w.epochMu.Lock()
	defer w.epochMu.Unlock()
	if ep := w.epoch.Load(); ep != nil {
		return ep
	}
	w.ep = now
	w.epoch.Store(&w.ep)
	return &w.ep
}

// Stats summarizes the gaps younger than 60 s at now. It copies the ring
// without blocking Add and sorts the copy.
func (w *Window) Stats(now time.Time) DecodeStats {
	ep := w.epoch.Load()
	if ep == nil {
		return decodeStats(nil, nil)
	}
	off := now.Sub(*ep)
	end := w.next.Load()
	start := end - min(end, uint64(len(w.ring)))
	mid := start + (end-start)/2
	gaps := make([]float64, 0, end-start)
	reasons := make([]Reason, 0, end-start)
	for i := start; i < end; i++ {
		if i == mid && w.midStats != nil {
			w.midStats()
		}
		e := &w.ring[i%uint64(len(w.ring))]
		seq := e.seq.Load()
		if seq != 2*i+2 {
			continue // still being written, or already overwritten
		}
		at, val := e.at.Load(), e.val.Load()
		if e.seq.Load() != seq || off-time.Duration(at) >= w.span {
			continue
		}
		gaps = append(gaps, timing.Ms(time.Duration(val>>8)))
		reasons = append(reasons, Reason(val&0xff))
	}
	return decodeStats(gaps, reasons)
}

// decodeStats computes the GET /v1/stats/decode object (docs/latency-guide.md#the-rolling-decode-endpoint) over gaps (ms) with
// their reasons, parallel slices.
func decodeStats(gaps []float64, reasons []Reason) DecodeStats {
	s := DecodeStats{StallThresholdMs: timing.Ms(StallThreshold), WindowSecs: int(WindowSpan / time.Second)}
	n := len(gaps)
	if n == 0 {
		return s
	}
	var sum float64
	for _, g := range gaps {
		sum += g
	}
	sorted := slices.Clone(gaps)
	slices.Sort(sorted)
	p50 := Percentile(sorted, 0.5)
	thr := stallThresholdMs(p50)
	for i, g := range gaps {
		if g >= thr {
			s.StallCount++
			s.StallReasons[reasons[i]]++
		}
	}
	s.SampleCount = n
	if sum > 0 {
		s.TokPerSec = float64(n) / (sum / 1000)
	}
	s.P50ITLMs = p50
	s.P99ITLMs = Percentile(sorted, 0.99)
	s.P999ITLMs = Percentile(sorted, 0.999)
	s.MeanITLMs = sum / float64(n)
	s.MaxITLMs = sorted[n-1]
	s.StallThresholdMs = thr
	s.UnexplainedStallCount = s.StallReasons[ReasonUnexplained]
	return s
}

// DecodeStats is the GET /v1/stats/decode object of docs/latency-guide.md#the-rolling-decode-endpoint.
// An empty window gives zeros, StallThresholdMs 250 and WindowSecs 60.
type DecodeStats struct {
	SampleCount           int
	TokPerSec             float64
	P50ITLMs              float64
	P99ITLMs              float64
	P999ITLMs             float64
	MeanITLMs             float64
	MaxITLMs              float64
	StallThresholdMs      float64
	StallCount            int
	UnexplainedStallCount int
	StallReasons          ReasonCounts
	WindowSecs            int
}

// MarshalJSON implements json.Marshaler.
func (s DecodeStats) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// AppendJSON appends the JSON object to b.
func (s *DecodeStats) AppendJSON(b []byte) []byte {
	b = append(b, `{"sample_count":`...)
	b = appendInt(b, s.SampleCount)
	b = append(b, `,"tok_per_sec":`...)
	b = appendFloat(b, s.TokPerSec)
	b = append(b, `,"p50_itl_ms":`...)
	b = appendFloat(b, s.P50ITLMs)
	b = append(b, `,"p99_itl_ms":`...)
	b = appendFloat(b, s.P99ITLMs)
	b = append(b, `,"p999_itl_ms":`...)
	b = appendFloat(b, s.P999ITLMs)
	b = append(b, `,"mean_itl_ms":`...)
	b = appendFloat(b, s.MeanITLMs)
	b = append(b, `,"max_itl_ms":`...)
	b = appendFloat(b, s.MaxITLMs)
	b = append(b, `,"stall_threshold_ms":`...)
	b = appendFloat(b, s.StallThresholdMs)
	b = append(b, `,"stall_count":`...)
	b = appendInt(b, s.StallCount)
	b = append(b, `,"unexplained_stall_count":`...)
	b = appendInt(b, s.UnexplainedStallCount)
	b = append(b, `,"stall_reasons":`...)
	b = s.StallReasons.AppendJSON(b)
	b = append(b, `,"window_secs":`...)
	b = appendInt(b, s.WindowSecs)
	return append(b, '}')
}
