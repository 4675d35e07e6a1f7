package latency

import (
	"slices"
	"sync"
	"time"
)

// Rolling window defaults (SPEC.md section 7).
const (
	WindowSpan            = 60 * time.Second
	DefaultWindowCapacity = 1 << 16
)

// Window is the rolling 60 s window of request-local gaps behind
// GET /v1/stats/decode: a bounded ring evicted by age and by capacity (the
// oldest entry is overwritten when full). It is safe for concurrent use:
// Add is O(1) under a short mutex; Stats copies the live entries under the
// mutex and sorts outside it. Time is always passed in, never read, so
// tests drive it with a fake clock.
type Window struct {
	mu     sync.Mutex
	span   time.Duration
	epoch  time.Time // instant of the first Add; entry times are offsets from it
	hasEp  bool
	at     []time.Duration // ring: offsets from epoch
	gap    []time.Duration
	reason []Reason
	head   int // oldest entry
	n      int // live entries
}

// NewWindow returns a 60 s window holding at most capacity gaps
// (DefaultWindowCapacity when capacity <= 0).
func NewWindow(capacity int) *Window {
	if capacity <= 0 {
		capacity = DefaultWindowCapacity
	}
	return &Window{
		span:   WindowSpan,
		at:     make([]time.Duration, capacity),
		gap:    make([]time.Duration, capacity),
		reason: make([]Reason, capacity),
	}
}

// Add records a gap that ended at now (the token's ready instant).
func (w *Window) Add(now time.Time, gap time.Duration, r Reason) {
	w.mu.Lock()
	if !w.hasEp {
		w.epoch, w.hasEp = now, true
	}
	off := now.Sub(w.epoch)
	w.evictLocked(off)
	c := len(w.at)
	if w.n == c { // full: overwrite the oldest
		w.head = (w.head + 1) % c
		w.n--
	}
	i := (w.head + w.n) % c
	w.at[i], w.gap[i], w.reason[i] = off, max(gap, 0), r
	w.n++
	w.mu.Unlock()
}

// evictLocked drops entries at least span old from the head. Entries added
// slightly out of order stay until they reach the head; Stats filters by
// age as well.
func (w *Window) evictLocked(off time.Duration) {
	c := len(w.at)
	for w.n > 0 && off-w.at[w.head] >= w.span {
		w.head = (w.head + 1) % c
		w.n--
	}
}

// Stats summarizes the gaps younger than 60 s at now.
func (w *Window) Stats(now time.Time) DecodeStats {
	w.mu.Lock()
	var gaps []float64
	var reasons []Reason
	if w.hasEp {
		off := now.Sub(w.epoch)
		w.evictLocked(off)
		gaps = make([]float64, 0, w.n)
		reasons = make([]Reason, 0, w.n)
		c := len(w.at)
		for k := range w.n {
			i := (w.head + k) % c
			if off-w.at[i] < w.span {
				gaps = append(gaps, ms(w.gap[i]))
				reasons = append(reasons, w.reason[i])
			}
		}
	}
	w.mu.Unlock()
	return decodeStats(gaps, reasons)
}

// decodeStats computes the SPEC section 7 object over gaps (ms) with
// their reasons, parallel slices.
func decodeStats(gaps []float64, reasons []Reason) DecodeStats {
	s := DecodeStats{StallThresholdMs: ms(StallThreshold), WindowSecs: int(WindowSpan / time.Second)}
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
	thr := max(ms(StallThreshold), 5*p50)
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

// DecodeStats is the GET /v1/stats/decode object of SPEC.md section 7.
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
