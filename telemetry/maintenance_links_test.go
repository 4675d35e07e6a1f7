package telemetry

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"
)

// TestMaintenanceRegistryOverlap: a lock wait links to exactly the
// maintenance operations whose hold overlapped it: an open operation
// overlaps everything after its start, End narrows it to the interval
// it held, and an operation pushed out of the ring no longer resolves.
func TestMaintenanceRegistryOverlap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	sc := func(b byte) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{b}, SpanID: trace.SpanID{b}})
	}
	tel := &Telemetry{maint: &maintRegistry{}}
	found := func(from, to int) []byte {
		var out []byte
		tel.maint.overlapping(at(from), at(to), func(op *maintOp) {
			if op.kind != LinkKindTrim || op.reason != "maintenance" {
				t.Errorf("kind %q reason %q", op.kind, op.reason)
			}
			out = append(out, op.sc.TraceID()[0])
		})
		return out
	}
	a := tel.BeginMaintenance(LinkKindTrim, "maintenance", sc(1), at(0))
	tests := []struct {
		name     string
		step     func()
		from, to int
		want     []byte
	}{
		{"open operation overlaps a later wait", func() {}, 500, 600, []byte{1}},
		{"not a wait before it began", func() {}, -100, -1, nil},
		{"narrowed: a wait inside the hold", func() { a.End(at(10), at(40)) }, 20, 30, []byte{1}},
		{"narrowed: a wait after the hold", func() {}, 41, 60, nil},
		{"narrowed: a wait around the hold", func() {}, 0, 100, []byte{1}},
		{"a second operation", func() { tel.BeginMaintenance(LinkKindTrim, "maintenance", sc(2), at(50)).End(at(50), at(70)) }, 30, 55, []byte{1, 2}},
		{"pushed out of the ring", func() {
			for range recentMaintenance {
				tel.BeginMaintenance(LinkKindTrim, "maintenance", sc(3), at(1000)).End(at(1000), at(1001))
			}
			a.End(at(0), at(10_000)) // a stale handle changes nothing
		}, 0, 100, nil},
	}
	for _, tc := range tests {
		tc.step()
		if d := cmp.Diff(tc.want, found(tc.from, tc.to)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}
