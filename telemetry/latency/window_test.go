package latency

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWindowEmpty(t *testing.T) {
	w := NewWindow(0)
	want := DecodeStats{StallThresholdMs: 250, WindowSecs: 60}
	if diff := cmp.Diff(want, w.Stats(t0)); diff != "" {
		t.Errorf("empty (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(w.Stats(t0))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "decode_stats_empty.json", b)
}

type windowAdd struct {
	at     time.Duration
	gap    time.Duration
	reason Reason
}

func TestWindowStats(t *testing.T) {
	tests := []struct {
		name     string
		capacity int
		adds     []windowAdd
		now      time.Duration
		want     DecodeStats
	}{
		{
			name: "numbers over four gaps",
			// gaps 10, 20, 30, 340 ms: sum 0.4 s, 4 gaps -> 10 tok/s
			adds: []windowAdd{{0, 10 * msD, ReasonActorDecode}, {msD, 20 * msD, ReasonActorDecode}, {2 * msD, 30 * msD, ReasonActorDecode}, {3 * msD, 340 * msD, ReasonActorPrefill}},
			now:  10 * time.Second,
			want: DecodeStats{
				SampleCount: 4, TokPerSec: 10, P50ITLMs: 25, P99ITLMs: 30 + 0.97*310, P999ITLMs: 30 + 0.997*310,
				MeanITLMs: 100, MaxITLMs: 340, StallThresholdMs: 250, StallCount: 1,
				StallReasons: ReasonCounts{ReasonActorPrefill: 1}, WindowSecs: 60,
			},
		},
		{
			name: "entries 60 s old are evicted by age",
			adds: []windowAdd{{0, 100 * msD, ReasonUnexplained}, {time.Second, 20 * msD, ReasonActorDecode}},
			now:  60 * time.Second,
			want: DecodeStats{SampleCount: 1, TokPerSec: 50, P50ITLMs: 20, P99ITLMs: 20, P999ITLMs: 20, MeanITLMs: 20, MaxITLMs: 20, StallThresholdMs: 250, WindowSecs: 60},
		},
		{
			name:     "capacity evicts the oldest",
			capacity: 2,
			adds:     []windowAdd{{0, 900 * msD, ReasonUnexplained}, {msD, 40 * msD, ReasonActorDecode}, {2 * msD, 60 * msD, ReasonActorDecode}},
			now:      time.Second,
			want:     DecodeStats{SampleCount: 2, TokPerSec: 20, P50ITLMs: 50, P99ITLMs: 59.8, P999ITLMs: 59.98, MeanITLMs: 50, MaxITLMs: 60, StallThresholdMs: 250, WindowSecs: 60},
		},
		{
			name: "adaptive threshold and unexplained stalls",
			// gaps 100, 100, 600 (unexplained), 2000 (resize): p50 350, threshold 1750
			adds: []windowAdd{{0, 100 * msD, ReasonActorDecode}, {0, 100 * msD, ReasonActorDecode}, {0, 600 * msD, ReasonUnexplained}, {0, 2000 * msD, ReasonResize}},
			now:  0,
			want: DecodeStats{
				SampleCount: 4, TokPerSec: 4 / 2.8, P50ITLMs: 350, P99ITLMs: 600 + 0.97*1400, P999ITLMs: 600 + 0.997*1400,
				MeanITLMs: 700, MaxITLMs: 2000, StallThresholdMs: 1750, StallCount: 1,
				StallReasons: ReasonCounts{ReasonResize: 1}, WindowSecs: 60,
			},
		},
		{
			name: "out-of-order adds: an old entry behind a young one is not counted",
			adds: []windowAdd{{61 * time.Second, 10 * msD, ReasonActorDecode}, {0, 10 * msD, ReasonActorDecode}},
			now:  70 * time.Second,
			want: DecodeStats{SampleCount: 1, TokPerSec: 100, P50ITLMs: 10, P99ITLMs: 10, P999ITLMs: 10, MeanITLMs: 10, MaxITLMs: 10, StallThresholdMs: 250, WindowSecs: 60},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWindow(tc.capacity)
			for _, a := range tc.adds {
				w.Add(at(a.at), a.gap, a.reason)
			}
			got := w.Stats(at(tc.now))
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(approx)); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
			if got.StallReasons.Total() != got.StallCount {
				t.Errorf("reasons sum %d != stall_count %d", got.StallReasons.Total(), got.StallCount)
			}
		})
	}
}

func TestDecodeStatsJSON(t *testing.T) {
	w := NewWindow(0)
	w.Add(t0, 20*msD, ReasonActorDecode)
	w.Add(t0, 300*msD, ReasonActorPrefill)
	b, err := json.Marshal(w.Stats(t0))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "decode_stats.json", b)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 12 {
		t.Errorf("%d keys, want 12", len(m))
	}
}

func TestWindowConcurrent(t *testing.T) {
	// Many requests add while scrapes read; run with -race. Every gap is
	// young, so the final count is exact.
	w := NewWindow(0)
	var wg sync.WaitGroup
	const writers, per = 8, 500
	for g := range writers {
		wg.Go(func() {
			for i := range per {
				w.Add(at(time.Duration(g*per+i)*time.Microsecond), msD, ReasonActorDecode)
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			if s := w.Stats(at(time.Second)); s.SampleCount > writers*per {
				t.Errorf("sample_count %d > %d", s.SampleCount, writers*per)
			}
		}
	})
	wg.Wait()
	if s := w.Stats(at(time.Second)); s.SampleCount != writers*per {
		t.Errorf("sample_count %d, want %d", s.SampleCount, writers*per)
	}
}

// TestWindowAddDuringStats shows that Add never waits behind a reader:
// Adds made from inside Stats' copy (through the midStats hook, on the
// reading goroutine itself) complete, which a window whose Stats held a
// lock shared with Add would turn into a deadlock. The Adds overwrite the
// half of the ring Stats already copied, so that read still sees every
// original gap, and the next read sees the new ones.
func TestWindowAddDuringStats(t *testing.T) {
	const c = 16
	w := NewWindow(c)
	for i := range c {
		w.Add(at(time.Duration(i)*msD), 10*msD, ReasonActorDecode)
	}
	hooked := 0
	w.midStats = func() {
		hooked++
		for i := range c / 2 {
			w.Add(at(time.Duration(c+i)*msD), 500*msD, ReasonActorPrefill)
		}
	}
	during := w.Stats(at(time.Second))
	w.midStats = nil
	after := w.Stats(at(time.Second))
	type reads struct {
		Hooked, During, After int
		DuringMax, AfterMax   float64
	}
	want := reads{Hooked: 1, During: c, After: c, DuringMax: 10, AfterMax: 500}
	got := reads{hooked, during.SampleCount, after.SampleCount, during.MaxITLMs, after.MaxITLMs}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reads around Adds made during Stats (-want +got):\n%s", diff)
	}
}

// TestWindowAddSkipsOverwritten shows that an entry overwritten while
// Stats copies it is skipped, never read half old and half new: the hook
// overwrites the whole ring with stalls from the middle of the copy, so
// the second half of the read finds newer sequence numbers.
func TestWindowAddSkipsOverwritten(t *testing.T) {
	const c = 8
	w := NewWindow(c)
	for i := range c {
		w.Add(at(time.Duration(i)*msD), 10*msD, ReasonActorDecode)
	}
	w.midStats = func() {
		for i := range c {
			w.Add(at(time.Duration(c+i)*msD), 900*msD, ReasonResize)
		}
	}
	got := w.Stats(at(time.Second))
	if got.SampleCount != c/2 || got.MaxITLMs != 10 {
		t.Errorf("sample_count %d max %v, want %d entries of 10 ms (the half read before the overwrite)", got.SampleCount, got.MaxITLMs, c/2)
	}
}
