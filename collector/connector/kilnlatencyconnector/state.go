package kilnlatencyconnector

import (
	"sort"

	"github.com/kiln-ai/kiln/telemetry"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// histogram is a cumulative explicit-bucket histogram: counts[i] holds the
// observations v with bounds[i-1] < v <= bounds[i] (the last, +Inf), as
// the OpenTelemetry SDK and Prometheus count them.
type histogram struct {
	counts []uint64
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) histogram {
	return histogram{counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(bounds []float64, v float64) {
	h.counts[sort.SearchFloat64s(bounds, v)]++
	h.sum += v
	h.n++
}

// state is everything the connector has counted since it started.
type state struct {
	bounds []float64

	itl, ttft, duration histogram
	phase               [latency.NumPhases]histogram
	stalls              [latency.NumReasons]uint64
	requests            [telemetry.NumOutcomes]uint64
	tokens              uint64

	dropped    [numDropReasons]uint64
	unretained uint64
}

func newState(bounds []float64) *state {
	s := &state{bounds: bounds, itl: newHistogram(bounds), ttft: newHistogram(bounds), duration: newHistogram(bounds)}
	for ph := range s.phase {
		s.phase[ph] = newHistogram(bounds)
	}
	return s
}

// addChat counts one decoded request span; request says whether it is a
// `chat {model}` span (every family) or another operation's (ITL and
// tokens only, as the in-process processor counts them).
func (s *state) addChat(c *chat, request bool) {
	s.tokens += uint64(c.obs.Summary.EmittedTokens)
	for i := range c.gaps.Len() {
		s.itl.observe(s.bounds, telemetry.GapFromMs(c.gaps.At(i).Double()).Seconds())
	}
	s.unretained += uint64(c.unretained)
	if !request {
		return
	}
	r := c.obs.Records()
	s.requests[r.Outcome]++
	if r.Duration.Valid {
		s.duration.observe(s.bounds, r.Duration.V)
	}
	if r.TTFT.Valid {
		s.ttft.observe(s.bounds, r.TTFT.V)
	}
	for ph, v := range r.Phases {
		if v.Valid {
			s.phase[ph].observe(s.bounds, v.V)
		}
	}
}
