package telemetry

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// runOp plays one operation of kind through the observer: began at
// queued, holding from start to end.
func runOp(tel *Telemetry, id uint64, kind timing.OpKind, parent uint64, queued, start, end time.Duration, fill func(*timing.Operation)) {
	op := &timing.Operation{ID: id, Kind: kind, Reason: "maintenance", Parent: parent, Queued: at(queued)}
	if fill != nil {
		fill(op)
	}
	tel.OperationBegan(op)
	op.Start, op.End, op.Hold, op.Outcome = at(start), at(end), end-start, timing.OutcomeOK
	tel.OperationEnded(op)
}

// opBlocker is a token's blocker naming operation id of kind.
func opBlocker(id uint64, kind timing.OpKind, from, to time.Duration) latency.Blocker {
	return latency.Blocker{Kind: latency.BlockerOperation, OpKind: kind, Op: id, Start: at(from), End: at(to)}
}

// TestBarrierChatLinks: a request whose first token names barrier
// operations (KV resize, adapter swap) among its blockers links its chat
// span to exactly those, by identity: not to a trim it names, not to an
// operation it does not name, however their intervals overlap.
func TestBarrierChatLinks(t *testing.T) {
	tests := []struct {
		name string
		bs   []latency.Blocker
		want []string
	}{
		{"queued behind a resize", []latency.Blocker{opBlocker(1, timing.OpResize, 20*msD, 50*msD)}, []string{"kiln.resize#1"}},
		{"queued behind a swap", []latency.Blocker{opBlocker(2, timing.OpAdapterSwap, 40*msD, 45*msD)}, []string{"kiln.adapter_swap#2"}},
		{"both", []latency.Blocker{opBlocker(1, timing.OpResize, 20*msD, 50*msD), opBlocker(2, timing.OpAdapterSwap, 40*msD, 45*msD)},
			[]string{"kiln.resize#1", "kiln.adapter_swap#2"}},
		{"a trim is no barrier", []latency.Blocker{opBlocker(4, timing.OpTrim, 30*msD, 35*msD)}, nil},
		{"named nothing", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			runOp(h.tel, 1, timing.OpResize, 0, 10*msD, 20*msD, 50*msD, nil)
			runOp(h.tel, 2, timing.OpAdapterSwap, 0, 30*msD, 40*msD, 45*msD, nil)
			runOp(h.tel, 3, timing.OpResize, 0, 15*msD, 30*msD, 60*msD, nil) // overlaps, not named
			runOp(h.tel, 4, timing.OpTrim, 0, 30*msD, 30*msD, 35*msD, nil)
			ctx, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
			tt := tok(0, 100*msD, timing.Phases{ActorQueue: 60 * msD})
			tt.Blockers = tc.bs
			r.Token(tt)
			r.End(EndInfo{Submitted: at(10 * msD), Admitted: at(70 * msD), AdmissionDone: at(70 * msD), PrefillDone: at(90 * msD), End: at(110 * msD)})
			spans := h.exp.GetSpans()
			chat := spanByID(t, spans, trace.SpanContextFromContext(ctx).SpanID())
			var got []string
			for _, l := range chat.Links {
				sp := spanByID(t, spans, l.SpanContext.SpanID())
				a := attrMap(l.Attributes)
				got = append(got, sp.Name+"#"+strconv.FormatInt(a[AttrOperationID].(int64), 10))
				if a[AttrLinkKind] != strings.TrimPrefix(sp.Name, "kiln.") {
					t.Errorf("link kind %v to %s", a[AttrLinkKind], sp.Name)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("chat span links (-want +got):\n%s", d)
			}
		})
	}
}

// TestStallLinksOperationByID: a stall span links to the operation its
// blockers name, by identity, once, and to no other operation whose hold
// overlaps the gap.
func TestStallLinksOperationByID(t *testing.T) {
	h := newHarness(t, Config{})
	step := func(op *timing.Operation) {
		op.Training = timing.TrainingDetail{Job: "train-1", Step: 2, Steps: 4, Tokens: 212}
	}
	runOp(h.tel, 10, timing.OpTrainingJob, 0, 0, 0, 900*msD, nil)
	runOp(h.tel, 11, timing.OpTrainingStep, 10, 100*msD, 100*msD, 400*msD, step)
	runOp(h.tel, 12, timing.OpTrim, 0, 150*msD, 150*msD, 160*msD, nil) // overlaps, not named
	_, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
	r.Token(tok(0, 90*msD, timing.Phases{Prefill: 80 * msD}))
	var p timing.Phases
	p.Decode = 310 * msD
	p.Observe(latency.BackendGPULockWait, 302*msD)
	p.Observe(latency.BackendTraining, 300*msD)
	tt := tok(1, 405*msD, p)
	tt.Blockers = []latency.Blocker{
		{Kind: latency.BlockerLockWait, Start: at(98 * msD), End: at(400 * msD)},
		opBlocker(11, timing.OpTrainingStep, 100*msD, 250*msD),
		opBlocker(11, timing.OpTrainingStep, 255*msD, 400*msD),
	}
	ev := r.Token(tt)
	r.End(EndInfo{End: at(420 * msD)})
	if ev.BlockingPhase != latency.ReasonTraining {
		t.Errorf("gap charged %v, want training", ev.BlockingPhase)
	}
	spans := h.exp.GetSpans()
	var stall *tracetest.SpanStub
	for i := range spans {
		if spans[i].Name == SpanStall {
			stall = &spans[i]
		}
	}
	if stall == nil {
		t.Fatal("no stall span")
	}
	if len(stall.Links) != 1 {
		t.Fatalf("stall links %+v, want one to the training step", stall.Links)
	}
	l := stall.Links[0]
	target := spanByID(t, spans, l.SpanContext.SpanID())
	if target.Name != SpanTrainingStep || attrMap(l.Attributes)[AttrOperationID] != int64(11) || attrMap(l.Attributes)[AttrLinkKind] != "training_step" {
		t.Errorf("stall links to %s with %v", target.Name, l.Attributes)
	}
	job := spanByID(t, spans, target.Parent.SpanID())
	if job.Name != SpanTrainingJob {
		t.Errorf("the step's parent is %s, want its job", job.Name)
	}
}

func spanByID(t *testing.T, spans tracetest.SpanStubs, id trace.SpanID) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans {
		if s.SpanContext.SpanID() == id {
			return s
		}
	}
	t.Fatalf("no span %s", id)
	return tracetest.SpanStub{}
}

// TestRecentMaintenance: newest first, with identity, reason, interval,
// outcome and summary; a running one has no end; the ring keeps the latest
// 64; a job's steps are its one record and push nothing out, though each
// stays resolvable by identity.
func TestRecentMaintenance(t *testing.T) {
	tel := &Telemetry{maint: newMaintRegistry(), tracer: noop.NewTracerProvider().Tracer("t"), log: zerolog.Nop()}
	if got := tel.RecentMaintenance(10); len(got) != 0 {
		t.Errorf("empty ring: %v", got)
	}
	runOp(tel, 1, timing.OpTrim, 0, 0, 5*msD, 7*msD, func(op *timing.Operation) { op.Trim.BackendBytes = 10 })
	tel.OperationBegan(&timing.Operation{ID: 2, Kind: timing.OpResize, Reason: "automatic_memory_policy", Queued: at(10 * msD)})
	want := []MaintenanceRecord{
		{ID: 2, Kind: "resize", Reason: "automatic_memory_policy", Start: at(10 * msD)},
		{ID: 1, Kind: "trim", Reason: "maintenance", Start: at(5 * msD), End: at(7 * msD), Hold: 2 * msD, Outcome: "ok",
			Summary: "trim, freed 10 B (rss 0 B -> 0 B)"},
	}
	got := tel.RecentMaintenance(10)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("recent (-want +got):\n%s", d)
	}
	if got[1].Duration() != 2*msD || got[0].Duration() != 0 {
		t.Errorf("durations %v %v, want 2ms and 0 (running)", got[1].Duration(), got[0].Duration())
	}
	tel.OperationBegan(&timing.Operation{ID: 3, Kind: timing.OpTrainingJob, Reason: "sft", Queued: at(20 * msD)})
	for i := range 100 {
		runOp(tel, uint64(100+i), timing.OpTrainingStep, 3, time.Duration(30+i)*msD, time.Duration(30+i)*msD, time.Duration(31+i)*msD,
			func(op *timing.Operation) { op.Training = timing.TrainingDetail{Job: "j", Step: i + 1, Steps: 100} })
	}
	all := tel.RecentMaintenance(1000)
	if len(all) != 3 || all[0].ID != 3 || all[0].Steps != 100 || all[0].Hold != 100*msD || !strings.HasPrefix(all[0].Summary, "training step 100 of 100") {
		t.Errorf("after a 100-step job: %+v", all)
	}
	if r, ok := tel.OperationRecord(199); !ok || r.Kind != "training_step" {
		t.Errorf("the latest step: %+v %v", r, ok)
	}
	if _, ok := tel.OperationRecord(100); ok {
		t.Error("the first of 100 steps is still resolvable (64 are kept)")
	}
	for i := range 100 {
		runOp(tel, uint64(1000+i), timing.OpTrim, 0, time.Duration(i)*time.Second, time.Duration(i)*time.Second, time.Duration(i)*time.Second, nil)
	}
	all = tel.RecentMaintenance(1000)
	if len(all) != recentMaintenance || all[0].ID != 1099 || all[63].ID != 1036 {
		t.Errorf("after 100 more operations: %d kept, newest %d oldest %d", len(all), all[0].ID, all[len(all)-1].ID)
	}
}

// TestCountKVResize: the nine closed series exist at 0; a count lands on
// its series; values outside the closed sets are refused.
func TestCountKVResize(t *testing.T) {
	h := newHarness(t, Config{})
	if err := h.tel.CountKVResize(ResizeReasonMaintenance, ResizeGrow); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][2]string{{"operator", ResizeGrow}, {ResizeReasonMaintenance, "sideways"}} {
		if err := h.tel.CountKVResize(bad[0], bad[1]); err == nil {
			t.Errorf("CountKVResize(%q, %q) accepted", bad[0], bad[1])
		}
	}
	text := h.scrape(t, "text/plain")
	var series []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, MetricKVResizes+"{") {
			series = append(series, line)
		}
	}
	if len(series) != 9 {
		t.Errorf("%d series of %s, want 9:\n%s", len(series), MetricKVResizes, strings.Join(series, "\n"))
	}
	if !strings.Contains(text, MetricKVResizes+`{direction="grow",reason="maintenance"} 1`) {
		t.Errorf("no count on {maintenance, grow}:\n%s", strings.Join(series, "\n"))
	}
}
