package timing

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestElapsed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name       string
		start, end time.Time
		want       time.Duration
		wantMs     float64
	}{
		{"forward", t0, t0.Add(1500 * time.Microsecond), 1500 * time.Microsecond, 1.5},
		{"equal", t0, t0, 0, 0},
		{"reversed saturates at zero", t0.Add(time.Second), t0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			type out struct {
				D  time.Duration
				Ms float64
			}
			got := out{Elapsed(tc.start, tc.end), Ms(Elapsed(tc.start, tc.end))}
			if diff := cmp.Diff(out{tc.want, tc.wantMs}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBlockerDuration(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := Blocker{Kind: BlockerPrefill, Start: t0.Add(time.Second), End: t0}
	if d := b.Duration(); d != 0 {
		t.Errorf("inverted blocker: %v, want 0", d)
	}
	b.End = t0.Add(3 * time.Second)
	if d := b.Duration(); d != 2*time.Second {
		t.Errorf("blocker: %v, want 2s", d)
	}
}

func TestNames(t *testing.T) {
	got := []string{BackendSampling.String(), BackendGPULockWait.String(), BackendTraining.String(), NumBackendPhases.String(),
		BlockerPrefill.String(), BlockerLockWait.String(), BlockerKind(0).String()}
	want := []string{"sampling", "gpu_lock_wait", "training", "unknown", "actor_prefill", "gpu_lock_wait", "unknown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestPhasesObserve(t *testing.T) {
	var p Phases
	p.Observe(BackendGPULockWait, time.Millisecond)
	p.Observe(BackendGPULockWait, time.Millisecond)
	if !p.Has(BackendGPULockWait) || p.Has(BackendSampling) || p.Backend[BackendGPULockWait] != 2*time.Millisecond {
		t.Errorf("phases %+v: want only gpu_lock_wait observed, 2 ms", p)
	}
}
