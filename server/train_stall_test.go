package server

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry"
)

// TestTrainStallsStream: over real HTTP, a stream decodes while a training
// job runs steps that each hold exclusive ownership for at least stallHold.
// The stream keeps producing tokens between steps (no gap longer than one
// step plus one forward pass), and every gap a step blocked is attributed
// to training, never gpu_lock_wait (the step explains the wait: docs/latency-guide.md#how-a-reason-is-chosen, rule 2), in the SSE events, the summary, /v1/stats/decode and
// kiln_token_stalls_total; its stall span links to the kiln.training_step
// span by the step's identity, a child of kiln.training_job, and the
// diagnosis record names the step ("training step N of 5, job ...").
//
// It runs on fake time (testing/synctest): each forward invocation takes
// fakeForward and each step's hold stallHold, computing takes none, so the
// bound on the widest gap is exact.
func TestTrainStallsStream(t *testing.T) {
	synctest.Test(t, trainStallsStream)
}

func trainStallsStream(t *testing.T) {
	h := newHarness(t, withSpans(tracetest.NewInMemoryExporter()), withTraining(t, ""), withFakeTime())
	t.Cleanup(h.srv.stopTraining)
	h.setStepHook(func() { time.Sleep(stallHold) })
	const steps = 5
	r := h.submitSFT(t, map[string]any{"examples": []any{trainExample("hello there", "the cat sat on the mat")},
		"config": map[string]any{"epochs": steps, "lora_rank": 2, "auto_load": false}})
	h.waitJob(t, r.JobID, func(j jobJSON) bool { return j.State == train.JobRunning })
	// Long enough that most gaps come after the job: a stream whose every
	// other gap is a stall raises the adaptive threshold (5 x p50) of the
	// summary and the window above the stalls, which the fixed-threshold
	// counter still counts.
	_, result := h.streamAsync(h.chatBody(map[string]any{"stream": true, "include_performance": true, "max_tokens": 160}))
	body := <-result
	j := h.waitJob(t, r.JobID, finished)
	if j.State != train.JobCompleted {
		t.Fatalf("job %+v", j)
	}

	spans := waitSpans(t, h.spans, telemetry.SpanTrainingJob)
	jobs, stepSpans := spanNamed(spans, telemetry.SpanTrainingJob), spanNamed(spans, telemetry.SpanTrainingStep)
	if len(jobs) != 1 || len(stepSpans) != steps {
		t.Fatalf("%d job spans and %d step spans, want 1 and %d", len(jobs), len(stepSpans), steps)
	}
	var longestStep time.Duration
	for _, s := range stepSpans {
		if s.Parent.SpanID() != jobs[0].SpanContext.SpanID() {
			t.Errorf("step span's parent %v is not the job span", s.Parent.SpanID())
		}
		longestStep = max(longestStep, s.EndTime.Sub(s.StartTime))
	}

	p := parseStream(t, body)
	if len(p.events) < 40 {
		t.Fatalf("%d token events, want 40", len(p.events))
	}
	var blocked int
	var widest float64
	prev := 0.0
	for i, e := range p.events {
		ready := num(t, e["ready_ms"])
		gap := ready - prev
		prev = ready
		if i == 0 {
			continue // the first token's wait is its TTFT
		}
		widest = max(widest, gap)
		if gap >= 250 {
			if bp := e["blocking_phase"]; bp != "training" {
				t.Errorf("event %d: a %.0f ms gap blamed on %v, want training", i, gap, bp)
			}
			blocked++
		}
	}
	if blocked < 2 {
		t.Errorf("%d stalls in the stream, want one per step it overlapped (at least 2)", blocked)
	}
	bound := longestStep + h.eng.Snapshot().ForwardMax
	if widest > timing.Ms(bound) {
		t.Errorf("widest gap %.0f ms, want at most one step plus one forward (%v)", widest, bound)
	}
	ev := h.stallEvidence(t, body, "training")
	if ev.summary != blocked || ev.window != blocked || ev.metric != blocked || ev.span != blocked {
		t.Errorf("training stalls: sse %d, summary %d, window %d, metric %d, spans %d; want %d everywhere",
			blocked, ev.summary, ev.window, ev.metric, ev.span, blocked)
	}
	checkNamed(t, h, p.terminal["id"].(string), "training", "training_step", "training step ", stepSpans)
	stepIDs := map[string]bool{}
	for _, s := range stepSpans {
		stepIDs[s.SpanContext.SpanID().String()] = true
	}
	for _, st := range stallsWithReason(h.spans.GetSpans(), "training") {
		var kinds []string
		for _, l := range st.Links {
			if stepIDs[l.SpanContext.SpanID().String()] {
				for _, kv := range l.Attributes {
					if string(kv.Key) == telemetry.AttrLinkKind {
						kinds = append(kinds, kv.Value.AsString())
					}
				}
			}
		}
		if d := cmp.Diff([]string{telemetry.LinkKindTrainingStep}, kinds); d != "" {
			t.Errorf("training stall's links to kiln.training_step by kind (-want +got):\n%s", d)
		}
	}
	if status, _, _ := h.do(http.MethodGet, "/v1/train/status", nil, nil); status != http.StatusOK {
		t.Errorf("GET /v1/train/status: %d", status)
	}
	t.Logf("%d of 40 gaps blocked by training steps; widest %.0f ms (bound %v)", blocked, widest, bound)
}
