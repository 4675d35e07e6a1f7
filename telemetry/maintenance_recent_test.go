package telemetry

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// TestBarrierChatLinks: a request charged a barrier phase links its chat
// span to the operations of that phase's kind whose interval overlaps its
// wait for admission, and to nothing else: not an operation of the other
// kind, not one outside the wait, and nothing when the phase is null.
func TestBarrierChatLinks(t *testing.T) {
	tests := []struct {
		name   string
		phases latency.GapPhases
		want   []string // kinds of the linked operations, in registration order
	}{
		{"charged resize", phasesWith(latency.SlotResize, 30*msD), []string{"resize@20"}},
		{"charged adapter", phasesWith(latency.SlotAdapter, 30*msD), []string{"adapter_swap@40"}},
		{"charged both", phasesWith(latency.SlotResize, 30*msD, latency.SlotAdapter, 5*msD), []string{"resize@20", "adapter_swap@40"}},
		{"charged nothing", latency.GapPhases{ActorQueue: 60 * msD}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			names := map[trace.SpanID]string{}
			op := func(kind string, from, to time.Duration) {
				_, sp := h.tel.StartMaintenanceSpan(context.Background(), "kiln."+kind)
				h.tel.BeginMaintenance(kind, "maintenance", sp.SpanContext(), at(from)).End(at(from), at(to))
				sp.End()
				names[sp.SpanContext().SpanID()] = kind + "@" + strconv.Itoa(int(from/msD))
			}
			op(LinkKindResize, 20*msD, 50*msD)      // overlaps the wait [10, 70]
			op(LinkKindAdapterSwap, 40*msD, 45*msD) // overlaps it
			op(LinkKindResize, 80*msD, 90*msD)      // after admission
			op(LinkKindTrim, 30*msD, 35*msD)        // not a barrier kind
			ctx, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
			tt := tok(0, 100*msD, tc.phases)
			r.Token(tt)
			r.End(EndInfo{Submitted: at(10 * msD), Admitted: at(70 * msD), AdmissionDone: at(70 * msD), PrefillDone: at(90 * msD), End: at(110 * msD)})
			chat := spanByID(t, h.exp.GetSpans(), trace.SpanContextFromContext(ctx).SpanID())
			var got []string
			for _, l := range chat.Links {
				got = append(got, names[l.SpanContext.SpanID()])
				if k := attrMap(l.Attributes)[AttrLinkKind]; !strings.HasPrefix(names[l.SpanContext.SpanID()], k.(string)) {
					t.Errorf("link kind %v to %s", k, names[l.SpanContext.SpanID()])
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("chat span links (-want +got):\n%s", d)
			}
		})
	}
}

func phasesWith(kv ...any) latency.GapPhases {
	var p latency.GapPhases
	for i := 0; i < len(kv); i += 2 {
		p.Observe(kv[i].(latency.Slot), kv[i+1].(time.Duration))
	}
	return p
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

// TestRecentMaintenance: newest first, with reason, interval, outcome and
// summary; a running one has no end; the ring keeps the latest 64.
func TestRecentMaintenance(t *testing.T) {
	tel := &Telemetry{maint: &maintRegistry{}}
	if got := tel.RecentMaintenance(10); len(got) != 0 {
		t.Errorf("empty ring: %v", got)
	}
	a := tel.BeginMaintenance(LinkKindTrim, "maintenance", trace.SpanContext{}, at(0))
	a.End(at(5*msD), at(7*msD))
	a.Describe("reclaimed", "reclaimed 10 bytes")
	tel.BeginMaintenance(LinkKindResize, ResizeReasonAutomatic, trace.SpanContext{}, at(10*msD))
	want := []MaintenanceRecord{
		{Kind: "resize", Reason: "automatic_memory_policy", Start: at(10 * msD)},
		{Kind: "trim", Reason: "maintenance", Start: at(5 * msD), End: at(7 * msD), Outcome: "reclaimed", Summary: "reclaimed 10 bytes"},
	}
	got := tel.RecentMaintenance(10)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("recent (-want +got):\n%s", d)
	}
	if got[1].Duration() != 2*msD || got[0].Duration() != 0 {
		t.Errorf("durations %v %v, want 2ms and 0 (running)", got[1].Duration(), got[0].Duration())
	}
	for i := range 100 {
		tel.BeginMaintenance(LinkKindTrim, "maintenance", trace.SpanContext{}, at(time.Duration(i)*time.Second))
	}
	all := tel.RecentMaintenance(1000)
	if len(all) != recentMaintenance || !all[0].Start.Equal(at(99*time.Second)) || !all[63].Start.Equal(at(36*time.Second)) {
		t.Errorf("after 102 operations: %d kept, newest %v oldest %v", len(all), all[0].Start, all[len(all)-1].Start)
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
