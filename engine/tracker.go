package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// The maintenance phases (docs/maintenance.md section 3), named by the backend
// slot each is reported in.
const (
	PhaseResize   = timing.BackendResize
	PhaseTrim     = timing.BackendTrim
	PhaseAdapter  = timing.BackendAdapter
	PhaseTraining = timing.BackendTraining
)

// numMaint is the number of maintenance phases; index i is slot
// PhaseResize+i.
const numMaint = int(PhaseTraining-PhaseResize) + 1

// maintIndex maps a maintenance phase to its tracker index; it panics on a
// slot that is not one (a programming error).
func maintIndex(p timing.BackendPhase) int {
	if p < PhaseResize || p > PhaseTraining {
		panic(fmt.Sprintf("engine: %v is not a maintenance phase", p))
	}
	return int(p - PhaseResize)
}

// MaintTimes are durations of the maintenance phases, indexed by phase
// minus PhaseResize; zero means the phase did not overlap.
type MaintTimes [numMaint]time.Duration

// Get returns the duration of phase p.
func (m MaintTimes) Get(p timing.BackendPhase) time.Duration { return m[maintIndex(p)] }

// AddTo charges the non-zero phases to p (a zero phase stays unobserved:
// null, not 0).
func (m *MaintTimes) AddTo(p *timing.Phases) {
	for i, d := range m {
		if d > 0 {
			p.Observe(PhaseResize+timing.BackendPhase(i), d)
		}
	}
}

// PhaseTracker measures when maintenance phases were active, for the
// requests they delayed. Guards of one phase may nest and overlap: the
// phase's time is the union of its guards (while any is open it runs, once).
// It is safe from any goroutine and allocates nothing.
type PhaseTracker struct {
	clock Clock
	mu    sync.Mutex
	open  [numMaint]int       // guards open per phase
	start [numMaint]time.Time // when the interval in progress began (open > 0)
	total [numMaint]time.Duration
	holds [holdRing]Hold // the latest guards of named operations, by begin order
	nh    int            // such guards ever begun
}

// holdRing is how many recent guards of named operations a tracker
// remembers for Holds: a wait spans at most a few of them.
const holdRing = 32

// Hold is one guard of a named operation: the operation's identity and
// kind and the interval the guard was open (End is zero while it is).
type Hold struct {
	Op         uint64
	Kind       timing.OpKind
	Start, End time.Time
}

// NewPhaseTracker returns a tracker reading instants from c (nil: the
// process's clock).
func NewPhaseTracker(c Clock) *PhaseTracker {
	if c == nil {
		c = realClock{}
	}
	return &PhaseTracker{clock: c}
}

// PhaseGuard is one open Begin; End closes it. The zero value's End does
// nothing.
type PhaseGuard struct {
	t     *PhaseTracker
	i     int
	h     int       // the guard's hold (an index of nh), -1 for an unnamed guard
	start time.Time // the tracker's instant at Begin
}

// Begin opens a guard of phase p (one of PhaseResize, PhaseTrim,
// PhaseAdapter, PhaseTraining) for no named operation.
func (t *PhaseTracker) Begin(p timing.BackendPhase) PhaseGuard {
	return t.begin(p, nil)
}

// BeginOp opens a guard of op's phase for op: the interval is also one of
// op's holds (Holds).
func (t *PhaseTracker) BeginOp(op *Operation) PhaseGuard {
	return t.begin(op.Kind.Slot(), op)
}

func (t *PhaseTracker) begin(p timing.BackendPhase, op *Operation) PhaseGuard {
	i := maintIndex(p)
	t.mu.Lock()
	now := t.clock.Now()
	if t.open[i] == 0 {
		t.start[i] = now
	}
	t.open[i]++
	h := -1
	if op != nil {
		h = t.nh
		t.holds[h%holdRing] = Hold{Op: op.ID, Kind: op.Kind, Start: now}
		t.nh++
	}
	t.mu.Unlock()
	return PhaseGuard{t: t, i: i, h: h, start: now}
}

// Holds calls f, oldest first, with every remembered hold of a named
// operation that overlapped [from, to], clipped to it (a hold still open
// ends at to).
func (t *PhaseTracker) Holds(from, to time.Time, f func(Hold)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for n := max(t.nh-holdRing, 0); n < t.nh; n++ {
		h := t.holds[n%holdRing]
		if h.End.IsZero() {
			h.End = to // still open
		}
		h.Start, h.End = timing.Later(h.Start, from), timing.Earlier(h.End, to)
		if h.End.After(h.Start) {
			f(h)
		}
	}
}

// Started is the instant the guard began (the tracker's clock).
func (g *PhaseGuard) Started() time.Time { return g.start }

// End closes the guard and returns the instant it did; the phase's
// interval ends when its last open guard does. A second End of the same
// guard value does nothing (and returns the zero instant).
func (g *PhaseGuard) End() time.Time {
	t := g.t
	if t == nil {
		return time.Time{}
	}
	g.t = nil
	t.mu.Lock()
	now := t.clock.Now()
	t.open[g.i]--
	if t.open[g.i] == 0 {
		t.total[g.i] += timing.Elapsed(t.start[g.i], now)
	}
	if g.h >= 0 && g.h >= t.nh-holdRing {
		t.holds[g.h%holdRing].End = now
	}
	t.mu.Unlock()
	return now
}

// PhaseSnapshot is the tracker's state at one instant: each phase's
// completed total and the start of any interval in progress.
type PhaseSnapshot struct {
	At      time.Time
	Total   MaintTimes
	Running [numMaint]time.Time // zero when the phase was not active
}

// Snapshot records the tracker's state now.
func (t *PhaseTracker) Snapshot() PhaseSnapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := PhaseSnapshot{At: t.clock.Now(), Total: t.total}
	for i, n := range t.open {
		if n > 0 {
			s.Running[i] = t.start[i]
		}
	}
	return s
}

// ObservedSince returns, per phase, exactly the time it was active after s
// was taken, an interval still running now included; an interval already
// running at s counts only from s on.
func (t *PhaseTracker) ObservedSince(s *PhaseSnapshot) MaintTimes {
	t.mu.Lock()
	now := t.clock.Now()
	var out MaintTimes
	for i := range out {
		cum := t.total[i]
		if t.open[i] > 0 {
			cum += timing.Elapsed(t.start[i], now)
		}
		before := s.Total[i]
		if !s.Running[i].IsZero() {
			before += timing.Elapsed(s.Running[i], s.At)
		}
		out[i] = max(cum-before, 0)
	}
	t.mu.Unlock()
	return out
}

// Active reports whether phase p has an open guard.
func (t *PhaseTracker) Active(p timing.BackendPhase) bool {
	i := maintIndex(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open[i] > 0
}
