package server

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/internal/timing"
)

// longAnswer is an assistant turn of about n tokens of kiln-tiny's
// vocabulary: a long answer makes a long training step.
func longAnswer(n int) string {
	words := strings.Fields("the cat sat on a warm mat and looked at the small bird in the old tree by the river")
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[i%len(words)])
	}
	return b.String()
}

// sliceRun is what a stream beside a training job saw.
type sliceRun struct {
	gaps      []float64 // ms, between consecutive tokens
	reasons   []any     // the blocking phase of each gap's event
	trainMs   float64   // the stream's summary training_ms
	stepHold  time.Duration
	forwardMx time.Duration
	unitMax   time.Duration // the longest unit of a step
}

// fakeWorkPerNs is how many estimated multiply-adds of a training unit
// take one nanosecond of fake time: a step of the walk-through's
// conversation takes about a second and a half, its longest unit about
// 65 ms.
const fakeWorkPerNs = 20

// streamBesideTraining streams maxTokens tokens while an SFT job of one
// conversation with a long answer trains for epochs, over HTTP, on fake
// time: a forward invocation takes fakeForward, a training unit its work
// at fakeWorkPerNs.
func streamBesideTraining(t *testing.T, slice time.Duration, answerWords, epochs, maxTokens int) sliceRun {
	h := newHarness(t, withTraining(t, ""), withConfig(func(c *Config) { c.MaintenanceSlice = slice }), withFakeTime())
	var run sliceRun
	h.setUnitCost(func(work int64) {
		d := time.Duration(work / fakeWorkPerNs)
		run.unitMax = max(run.unitMax, d) // units run one at a time, inside the hold
		time.Sleep(d)
	})
	first, result := h.streamAsync(h.chatBody(map[string]any{"stream": true, "include_performance": true,
		"max_tokens": maxTokens}))
	<-first
	r := h.submitSFT(t, map[string]any{"examples": []any{trainExample("tell me a long story", longAnswer(answerWords))},
		"config": map[string]any{"epochs": epochs, "lora_rank": 4, "auto_load": false}})
	p := parseStream(t, <-result)
	j := h.waitJob(t, r.JobID, finished)
	if j.State != train.JobCompleted {
		t.Fatalf("job %+v", j)
	}
	prev := 0.0
	for i, e := range p.events {
		ready := num(t, e["ready_ms"])
		if i > 0 {
			run.gaps = append(run.gaps, ready-prev)
			run.reasons = append(run.reasons, e["blocking_phase"])
		}
		prev = ready
	}
	if len(p.events) < maxTokens/3 {
		t.Fatalf("%d token events of %d: the stream ended before it could meet the job", len(p.events), maxTokens)
	}
	phases := perfOf(t, p.terminal)["latency"].(map[string]any)["phases"].(map[string]any)
	if v, ok := phases["training_ms"]; ok && v != nil {
		run.trainMs = num(t, v)
	}
	for _, op := range h.tel.RecentMaintenance(64) {
		run.stepHold = max(run.stepHold, op.Hold/time.Duration(max(op.Steps, 1)))
	}
	run.forwardMx = h.eng.Snapshot().ForwardMax
	return run
}

// TestTrainingSlicedBesideStream is the walk-through of issue 28 over
// HTTP: kiln-tiny, a conversation with a 240-word answer trained for 3
// epochs beside a 1,000-token stream, on fake time (testing/synctest). With
// the default slice no gap exceeds one slice plus the unit that overran it
// plus one forward invocation, every gap of 250 ms or more is charged
// training, and the stream's training_ms counts the slices that paused
// it; with --maintenance-slice 0 the stream stops for whole steps, each
// charged training.
func TestTrainingSlicedBesideStream(t *testing.T) {
	if raceEnabled {
		t.Skip("training steps take minutes under the race detector; scripts/test runs this without it")
	}
	for _, tc := range []struct {
		name  string
		slice time.Duration
	}{{"default slice", DefaultMaintenanceSlice}, {"whole steps", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkSliced(t, tc.slice, streamBesideTraining(t, tc.slice, 240, 3, 1000)) })
		})
	}
}

// checkSliced checks what a stream beside training saw against the slice.
func checkSliced(t *testing.T, slice time.Duration, run sliceRun) {
	widest, stalls := 0.0, 0
	for i, g := range run.gaps {
		widest = max(widest, g)
		if g >= 250 {
			stalls++
			if run.reasons[i] != "training" {
				t.Errorf("gap %d of %.0f ms charged %v, want training", i+1, g, run.reasons[i])
			}
		}
	}
	if run.trainMs <= 0 {
		t.Errorf("the stream's training_ms is %v: no slice paused it", run.trainMs)
	}
	sorted := slices.Sorted(slices.Values(run.gaps))
	t.Logf("slice %v: %d gaps, p50 %.1f ms, p99 %.1f ms, widest %.0f ms, %d of 250 ms or more; training_ms %.0f, step hold %v, longest unit %v, forward max %v",
		slice, len(sorted), sorted[len(sorted)/2], sorted[len(sorted)*99/100], widest, stalls, run.trainMs, run.stepHold, run.unitMax, run.forwardMx)
	if slice > 0 {
		if bound := slice + run.unitMax + run.forwardMx; widest > timing.Ms(bound) {
			t.Errorf("widest gap %.0f ms, want at most slice + one unit + one forward = %v", widest, bound)
		}
		return
	}
	if stalls < 1 || widest < timing.Ms(run.stepHold) {
		t.Errorf("whole steps: widest gap %.0f ms with %d stalls, want at least a step (%v)", widest, stalls, run.stepHold)
	}
}
