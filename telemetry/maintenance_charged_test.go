package telemetry

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// TestChargedRequestLinksToAdapterSwap: a chat span whose request was
// charged adapter_ms links to the kiln.adapter_swap that overlapped its
// wait for admission, and only to it (not to a trim at the same time, not
// to a swap after its admission); a request charged nothing links to none.
func TestChargedRequestLinksToAdapterSwap(t *testing.T) {
	h := newHarness(t, Config{})
	sc := func(b byte) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{b}, SpanID: trace.SpanID{b}})
	}
	h.tel.BeginMaintenance(LinkKindAdapter, sc(1), at(2*msD)).End(at(5*msD), at(9*msD))
	h.tel.BeginMaintenance(LinkKindTrim, sc(2), at(3*msD)).End(at(3*msD), at(4*msD))
	h.tel.BeginMaintenance(LinkKindAdapter, sc(3), at(50*msD)).End(at(50*msD), at(60*msD))

	var adapter latency.GapPhases
	adapter.Observe(latency.SlotAdapter, 7*msD)
	tests := []struct {
		name   string
		phases latency.GapPhases
		want   []byte
	}{
		{"charged adapter_ms", adapter, []byte{1}},
		{"charged nothing", latency.GapPhases{}, nil},
	}
	for _, tc := range tests {
		h.exp.Reset()
		_, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
		r.Token(tok(0, 12*msD, tc.phases))
		r.End(EndInfo{Outcome: OutcomeOK, Submitted: at(msD), Admitted: at(10 * msD), AdmissionDone: at(10 * msD), PrefillDone: at(11 * msD)})
		var got []byte
		for _, s := range h.exp.GetSpans() {
			if s.Name != "chat m" {
				continue
			}
			for _, l := range s.Links {
				if a := attrMap(l.Attributes); a[AttrLinkKind] != LinkKindAdapter {
					t.Errorf("%s: link kind %v", tc.name, a[AttrLinkKind])
				}
				got = append(got, l.SpanContext.TraceID()[0])
			}
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: linked swaps (-want +got):\n%s", tc.name, d)
		}
	}
}
