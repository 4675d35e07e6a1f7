package engine_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/internal/timing"
)

// fakeClock is a clock tests advance by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock               { return &fakeClock{t: time.Unix(1000, 0)} }
func ms(n int) time.Duration                 { return time.Duration(n) * time.Millisecond }
func maint(resize, trim, adapter, training int) engine.MaintTimes {
	return engine.MaintTimes{ms(resize), ms(trim), ms(adapter), ms(training)}
}

// TestPhaseTrackerRules: each rule of docs/maintenance.md section 3 with exact
// durations on an injected clock.
func TestPhaseTrackerRules(t *testing.T) {
	tests := []struct {
		name string
		run  func(c *fakeClock, tr *engine.PhaseTracker) engine.MaintTimes
		want engine.MaintTimes
	}{
		{"nested guards count once", func(c *fakeClock, tr *engine.PhaseTracker) engine.MaintTimes {
			s := tr.Snapshot()
			outer := tr.Begin(engine.PhaseTrim)
			c.advance(ms(10))
			inner := tr.Begin(engine.PhaseTrim)
			c.advance(ms(20))
			inner.End()
			c.advance(ms(5))
			outer.End()
			c.advance(ms(100))
			return tr.ObservedSince(&s)
		}, maint(0, 35, 0, 0)},
		{"overlapping guards are their union", func(c *fakeClock, tr *engine.PhaseTracker) engine.MaintTimes {
			s := tr.Snapshot()
			a := tr.Begin(engine.PhaseTraining)
			c.advance(ms(10))
			b := tr.Begin(engine.PhaseTraining)
			c.advance(ms(10))
			a.End()
			c.advance(ms(10))
			b.End()
			return tr.ObservedSince(&s)
		}, maint(0, 0, 0, 30)},
		{"an interval running at the snapshot counts only after it", func(c *fakeClock, tr *engine.PhaseTracker) engine.MaintTimes {
			g := tr.Begin(engine.PhaseResize)
			c.advance(ms(40))
			s := tr.Snapshot()
			c.advance(ms(15))
			g.End()
			return tr.ObservedSince(&s)
		}, maint(15, 0, 0, 0)},
		{"an interval still running now counts up to now", func(c *fakeClock, tr *engine.PhaseTracker) engine.MaintTimes {
			s := tr.Snapshot()
			c.advance(ms(3))
			tr.Begin(engine.PhaseAdapter)
			c.advance(ms(7))
			return tr.ObservedSince(&s)
		}, maint(0, 0, 7, 0)},
		{"work before the snapshot is not observed", func(c *fakeClock, tr *engine.PhaseTracker) engine.MaintTimes {
			g := tr.Begin(engine.PhaseTrim)
			c.advance(ms(50))
			g.End()
			s := tr.Snapshot()
			c.advance(ms(50))
			return tr.ObservedSince(&s)
		}, maint(0, 0, 0, 0)},
		{"phases are independent", func(c *fakeClock, tr *engine.PhaseTracker) engine.MaintTimes {
			s := tr.Snapshot()
			g := tr.Begin(engine.PhaseTrim)
			c.advance(ms(2))
			h := tr.Begin(engine.PhaseTraining)
			c.advance(ms(3))
			g.End()
			h.End()
			g.End() // a second End does nothing
			return tr.ObservedSince(&s)
		}, maint(0, 5, 0, 3)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeClock()
			got := tc.run(c, engine.NewPhaseTracker(c))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("observed (-want +got):\n%s", d)
			}
		})
	}
}

// TestMaintTimesAddToObservesOnlyNonZero: a phase that did not overlap
// stays unobserved (null), not 0.
func TestMaintTimesAddToObservesOnlyNonZero(t *testing.T) {
	var p timing.Phases
	m := maint(0, 4, 0, 0)
	m.AddTo(&p)
	got := []bool{p.Has(timing.BackendResize), p.Has(timing.BackendTrim), p.Has(timing.BackendAdapter), p.Has(timing.BackendTraining)}
	if d := cmp.Diff([]bool{false, true, false, false}, got); d != "" {
		t.Errorf("observed (-want +got):\n%s", d)
	}
	if p.Backend[timing.BackendTrim] != ms(4) {
		t.Errorf("trim = %v, want 4ms", p.Backend[timing.BackendTrim])
	}
}

// TestPhaseTrackerRejectsOtherSlots: Begin of a slot that is not a
// maintenance phase is a programming error.
func TestPhaseTrackerRejectsOtherSlots(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Begin(gpu_lock_wait) did not panic")
		}
	}()
	engine.NewPhaseTracker(nil).Begin(timing.BackendGPULockWait)
}

// TestPhaseTrackerConcurrent: guards from many goroutines leave the phase
// idle and its time the union (run under -race).
func TestPhaseTrackerConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := engine.NewPhaseTracker(nil)
		s := tr.Snapshot()
		done := make(chan struct{})
		for range 8 {
			go func() {
				g := tr.Begin(engine.PhaseTrim)
				time.Sleep(ms(10))
				g.End()
				done <- struct{}{}
			}()
		}
		for range 8 {
			<-done
		}
		if got := tr.ObservedSince(&s).Get(engine.PhaseTrim); got != ms(10) || tr.Active(engine.PhaseTrim) {
			t.Errorf("trim %v (active %v), want 10ms, idle", got, tr.Active(engine.PhaseTrim))
		}
	})
}

// BenchmarkPhaseTrackerSnapshot: the snapshot a waiting forward takes
// allocates nothing.
func BenchmarkPhaseTrackerSnapshot(b *testing.B) {
	tr := engine.NewPhaseTracker(nil)
	b.ReportAllocs()
	for b.Loop() {
		s := tr.Snapshot()
		g := tr.Begin(engine.PhaseTrim)
		g.End()
		_ = tr.ObservedSince(&s)
	}
}
