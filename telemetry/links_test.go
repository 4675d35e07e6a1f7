package telemetry

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// linkView is what a test compares of a span link.
type linkView struct {
	Trace, Span string
	Sampled     bool
	Attrs       map[string]any
}

func linksOf(s tracetest.SpanStub) []linkView {
	var out []linkView
	for _, l := range s.Links {
		out = append(out, linkView{Trace: l.SpanContext.TraceID().String(), Span: l.SpanContext.SpanID().String(),
			Sampled: l.SpanContext.IsSampled(), Attrs: attrMap(l.Attributes)})
	}
	return out
}

func prefillLink(sc trace.SpanContext, startMs, durMs float64, self bool) linkView {
	return linkView{Trace: sc.TraceID().String(), Span: sc.SpanID().String(), Sampled: sc.IsSampled(), Attrs: map[string]any{
		AttrLinkKind: LinkKindActorPrefill, AttrBlockerStartOffsetMs: startMs, AttrBlockerDurationMs: durMs, AttrBlockerSelf: self,
	}}
}

// blockerAttrs are the stall span's blocker attributes.
func blockerAttrs(s tracetest.SpanStub) map[string]any {
	out := map[string]any{}
	for k, v := range attrMap(s.Attributes) {
		if k == AttrBlockerLockWaitMs || k == AttrBlockerUnresolved {
			out[k] = v
		}
	}
	return out
}

type eventView struct {
	Name  string
	At    time.Duration // since t0
	Attrs map[string]any
}

func eventsOf(s tracetest.SpanStub) []eventView {
	var out []eventView
	for _, e := range s.Events {
		out = append(out, eventView{Name: e.Name, At: e.Time.Sub(t0), Attrs: attrMap(e.Attributes)})
	}
	return out
}

func stallOf(t *testing.T, spans tracetest.SpanStubs, parent trace.SpanContext) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == SpanStall && s.Parent.SpanID() == parent.SpanID() {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d stall spans under %s, want 1 (spans %v)", len(found), parent.SpanID(), names(spans))
	}
	return found[0]
}

// TestStallLinks: a stall span links to the chat span of every prefill
// blocker's request that resolves (in flight, ended recently, or the
// stalled request itself), with the blocking work's offset and duration
// relative to the stalled request's receipt; blockers that do not resolve
// are counted; lock waits become a total and one event each.
func TestStallLinks(t *testing.T) {
	const other, self, unknown = "other", "self", "unknown"
	type blk struct {
		kind       latency.BlockerKind
		who        string // other, self, unknown; "" for a lock wait
		start, end time.Duration
	}
	tests := []struct {
		name       string
		endOther   bool // the blocking request ends before the stall
		evictOther bool // and 256 more requests end after it
		blockers   []blk
		wantLinks  func(otherSC, selfSC trace.SpanContext) []linkView
		wantAttrs  map[string]any
		wantEvents []eventView
	}{
		{
			name:     "another request's prefill in flight",
			blockers: []blk{{latency.BlockerPrefill, other, 80 * msD, 380 * msD}},
			wantLinks: func(o, _ trace.SpanContext) []linkView {
				return []linkView{prefillLink(o, 80, 300, false)}
			},
			wantAttrs: map[string]any{},
		},
		{
			name:     "a prefill whose request has ended",
			endOther: true,
			blockers: []blk{{latency.BlockerPrefill, other, 80 * msD, 380 * msD}},
			wantLinks: func(o, _ trace.SpanContext) []linkView {
				return []linkView{prefillLink(o, 80, 300, false)}
			},
			wantAttrs: map[string]any{},
		},
		{
			name:       "a prefill whose request ended long ago",
			endOther:   true,
			evictOther: true,
			blockers:   []blk{{latency.BlockerPrefill, other, 80 * msD, 380 * msD}},
			wantLinks:  func(_, _ trace.SpanContext) []linkView { return nil },
			wantAttrs:  map[string]any{AttrBlockerUnresolved: int64(1)},
		},
		{
			name:     "own prefill and an unknown request",
			blockers: []blk{{latency.BlockerPrefill, self, 60 * msD, 260 * msD}, {latency.BlockerPrefill, unknown, 260 * msD, 300 * msD}},
			wantLinks: func(_, s trace.SpanContext) []linkView {
				return []linkView{prefillLink(s, 60, 200, true)}
			},
			wantAttrs: map[string]any{AttrBlockerUnresolved: int64(1)},
		},
		{
			name:      "lock waits",
			blockers:  []blk{{latency.BlockerLockWait, "", 60 * msD, 260 * msD}, {latency.BlockerLockWait, "", 300 * msD, 350 * msD}},
			wantLinks: func(_, _ trace.SpanContext) []linkView { return nil },
			wantAttrs: map[string]any{AttrBlockerLockWaitMs: 250.0},
			wantEvents: []eventView{
				{EventBlockerLockWait, 60 * msD, map[string]any{AttrBlockerStartOffsetMs: 60.0, AttrBlockerDurationMs: 200.0}},
				{EventBlockerLockWait, 300 * msD, map[string]any{AttrBlockerStartOffsetMs: 300.0, AttrBlockerDurationMs: 50.0}},
			},
		},
		{
			name:     "a prefill and a lock wait",
			blockers: []blk{{latency.BlockerPrefill, other, 100 * msD, 350 * msD}, {latency.BlockerLockWait, "", 60 * msD, 100 * msD}},
			wantLinks: func(o, _ trace.SpanContext) []linkView {
				return []linkView{prefillLink(o, 100, 250, false)}
			},
			wantAttrs: map[string]any{AttrBlockerLockWaitMs: 40.0},
			wantEvents: []eventView{
				{EventBlockerLockWait, 60 * msD, map[string]any{AttrBlockerStartOffsetMs: 60.0, AttrBlockerDurationMs: 40.0}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			octx, o := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
			otherSC := trace.SpanContextFromContext(octx)
			if tc.endOther {
				o.End(EndInfo{})
			}
			if tc.evictOther {
				for range recentEnded {
					_, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
					r.End(EndInfo{})
				}
			}
			sctx, s := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0, Stream: true})
			selfSC := trace.SpanContextFromContext(sctx)
			ids := map[string]uint64{other: o.ID(), self: s.ID(), unknown: 1 << 60}
			var bs []latency.Blocker
			for _, b := range tc.blockers {
				bs = append(bs, latency.Blocker{Kind: b.kind, Request: ids[b.who], Start: at(b.start), End: at(b.end)})
			}
			s.Token(tok(0, 50*msD, timing.Phases{}))
			tt := tok(1, 400*msD, timing.Phases{Prefill: 300 * msD, Decode: 40 * msD})
			tt.Blockers = bs
			s.Token(tt)
			s.End(EndInfo{})
			o.End(EndInfo{})

			stall := stallOf(t, h.exp.GetSpans(), selfSC)
			if d := cmp.Diff(tc.wantLinks(otherSC, selfSC), linksOf(stall)); d != "" {
				t.Errorf("links (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantAttrs, blockerAttrs(stall)); d != "" {
				t.Errorf("blocker attributes (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantEvents, eventsOf(stall)); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

// TestStallLinkToUnsampledSpan: a link to a request whose trace is not
// sampled (its chat span is recorded for metrics but never exported) is
// still made, with the unsampled span context; and a stall span that is
// itself not sampled still carries its links for in-process processors.
func TestStallLinkToUnsampledSpan(t *testing.T) {
	remote := func(tid byte, sampled bool) context.Context {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{tid, 1}, SpanID: trace.SpanID{tid, 2}, Remote: true})
		if sampled {
			sc = sc.WithTraceFlags(trace.FlagsSampled)
		}
		return trace.ContextWithRemoteSpanContext(context.Background(), sc)
	}
	tests := []struct {
		name                string
		blocker, stalled    bool // their parents are sampled
		wantExported        bool // the stall span reaches the exporter
		wantBlockerExported bool
	}{
		{"sampled stall, unsampled blocker", false, true, true, false},
		{"unsampled stall, sampled blocker", true, false, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{}) // parentbased_always_on
			bctx, b := h.tel.StartRequest(remote(1, tc.blocker), RequestInfo{Model: "m", Received: t0})
			blockerSC := trace.SpanContextFromContext(bctx)
			sctx, s := h.tel.StartRequest(remote(2, tc.stalled), RequestInfo{Model: "m", Received: t0})
			s.Token(tok(0, 50*msD, timing.Phases{}))
			tt := tok(1, 400*msD, timing.Phases{Prefill: 300 * msD})
			tt.Blockers = []latency.Blocker{{Kind: latency.BlockerPrefill, Request: b.ID(), Start: at(60 * msD), End: at(360 * msD)}}
			s.Token(tt)
			s.End(EndInfo{})
			b.End(EndInfo{})

			if blockerSC.IsSampled() != tc.blocker {
				t.Fatalf("blocker span sampled %v, want %v", blockerSC.IsSampled(), tc.blocker)
			}
			exported := h.exp.GetSpans()
			var stallExported, blockerExported bool
			for _, sp := range exported {
				stallExported = stallExported || sp.Name == SpanStall
				blockerExported = blockerExported || sp.SpanContext.SpanID() == blockerSC.SpanID()
			}
			if stallExported != tc.wantExported || blockerExported != tc.wantBlockerExported {
				t.Errorf("exported: stall %v blocker %v, want %v %v", stallExported, blockerExported, tc.wantExported, tc.wantBlockerExported)
			}
			stall := stallOf(t, tracetest.SpanStubsFromReadOnlySpans(h.rec.Ended()), trace.SpanContextFromContext(sctx))
			want := []linkView{prefillLink(blockerSC, 60, 300, false)}
			if d := cmp.Diff(want, linksOf(stall)); d != "" {
				t.Errorf("recorded stall links (-want +got):\n%s", d)
			}
		})
	}
}

// TestRequestRegistryBounded: ids are unique and never 0; a request
// resolves while in flight and for recentEnded ends after its own, then
// it is forgotten, so memory is the requests in flight plus recentEnded.
func TestRequestRegistryBounded(t *testing.T) {
	h := newHarness(t, Config{})
	var live []*Request
	for range 3 {
		_, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
		live = append(live, r)
	}
	var ended []uint64
	for range recentEnded + 10 {
		_, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
		r.End(EndInfo{})
		ended = append(ended, r.ID())
	}
	if got, want := h.tel.reqs.size(), len(live)+recentEnded; got != want {
		t.Errorf("registry holds %d requests, want %d", got, want)
	}
	resolves := func(id uint64) bool { _, ok := h.tel.reqs.lookup(id); return ok }
	got := []bool{resolves(live[0].ID()), resolves(ended[9]), resolves(ended[10]), resolves(ended[len(ended)-1])}
	if d := cmp.Diff([]bool{true, false, true, true}, got); d != "" {
		t.Errorf("resolves (live, 11th newest-but-evicted, oldest kept, newest) (-want +got):\n%s", d)
	}
	for _, r := range live {
		r.End(EndInfo{})
	}

	// Concurrent reservations never collide and are never 0.
	const workers, each = 8, 500
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			ids := make([]uint64, 0, each)
			for range each {
				ids = append(ids, h.tel.NewRequestID())
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				if id == 0 || seen[id] {
					t.Errorf("id %d reserved twice or 0", id)
				}
				seen[id] = true
			}
		})
	}
	wg.Wait()
}

// TestRequestInfoID: a reserved id given to StartRequest is the request's
// id and resolves to its chat span.
func TestRequestInfoID(t *testing.T) {
	h := newHarness(t, Config{})
	id := h.tel.NewRequestID()
	ctx, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0, ID: id})
	defer r.End(EndInfo{})
	sc, ok := h.tel.reqs.lookup(id)
	if r.ID() != id || !ok || sc.SpanID() != trace.SpanContextFromContext(ctx).SpanID() {
		t.Errorf("ID() = %d, want %d; resolves %v to %s", r.ID(), id, ok, sc.SpanID())
	}
}
