package kilnlatencyconnector

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/kiln-ai/kiln/telemetry"
)

// chatSpan is a well-formed `chat {model}` span of tokens tokens whose
// gaps are all gapMs.
func chatSpan(ss ptrace.ScopeSpans, tokens int, gapMs float64) ptrace.Span {
	s := ss.Spans().AppendEmpty()
	s.SetName("chat kiln-tiny")
	a := s.Attributes()
	a.PutStr(telemetry.AttrGenAIOperationName, telemetry.OperationChat)
	a.PutStr(telemetry.AttrGenAIRequestModel, "kiln-tiny")
	a.PutStr(telemetry.AttrStatus, "ok")
	a.PutDouble(telemetry.AttrDurationMs, 40+gapMs*float64(tokens))
	a.PutDouble(telemetry.AttrTTFTMs, 30)
	a.PutInt(telemetry.AttrEmittedTokens, int64(tokens))
	a.PutInt(telemetry.AttrGapSamples, int64(tokens-1))
	a.PutInt(telemetry.AttrRetainedGapSamples, int64(tokens-1))
	a.PutBool(telemetry.AttrGapSamplesTruncated, false)
	a.PutDouble(telemetry.AttrPhasePrefix+"decode_ms", gapMs*float64(tokens-1))
	a.PutInt(telemetry.AttrStallReasonPrefix+"actor_prefill", 0)
	a.PutEmptySlice(telemetry.AttrGenAIResponseFinishReasons).AppendEmpty().SetStr("stop")
	gaps := a.PutEmptySlice(telemetry.AttrGapsMs)
	reasons := a.PutEmptySlice(telemetry.AttrGapReasons)
	for range tokens - 1 {
		gaps.AppendEmpty().SetDouble(gapMs)
		reasons.AppendEmpty().SetInt(3)
	}
	return s
}

func stallSpan(ss ptrace.ScopeSpans, reason string, gapMs float64) ptrace.Span {
	s := ss.Spans().AppendEmpty()
	s.SetName(telemetry.SpanStall)
	s.Attributes().PutStr(telemetry.AttrStallReason, reason)
	s.Attributes().PutDouble(telemetry.AttrStallGapMs, gapMs)
	return s
}

// kilnScope adds a scope block of Kiln's instrumentation scope.
func kilnScope(td ptrace.Traces) ptrace.ScopeSpans {
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName(telemetry.ScopeName)
	return ss
}

// counted is what one span changed in the state.
type counted struct {
	Requests, Tokens, ITL, Stalls uint64
	Dropped                       [numDropReasons]uint64
}

func countOne(t *testing.T, build func(ss ptrace.ScopeSpans)) counted {
	t.Helper()
	td := ptrace.NewTraces()
	build(kilnScope(td))
	c := newConnector(connectorSettings(), &Config{FlushInterval: 1}, nil, telemetry.Buckets())
	if err := c.ConsumeTraces(t.Context(), td); err != nil {
		t.Fatal(err)
	}
	st := c.st
	got := counted{Tokens: st.tokens, ITL: st.itl.n, Dropped: st.dropped}
	for _, n := range st.requests {
		got.Requests += n
	}
	for _, n := range st.stalls {
		got.Stalls += n
	}
	return got
}

func TestDecode(t *testing.T) {
	ok := counted{Requests: 1, Tokens: 4, ITL: 3}
	missing := counted{Dropped: [numDropReasons]uint64{dropMissing: 1}}
	malformed := counted{Dropped: [numDropReasons]uint64{dropMalformed: 1}}
	chat := func(mut func(a pcommon.Map)) func(ss ptrace.ScopeSpans) {
		return func(ss ptrace.ScopeSpans) { mut(chatSpan(ss, 4, 20).Attributes()) }
	}
	tests := []struct {
		name  string
		build func(ss ptrace.ScopeSpans)
		want  counted
	}{
		{"well formed", chat(func(pcommon.Map) {}), ok},
		{"unknown keys are ignored", chat(func(a pcommon.Map) { a.PutStr("kiln.future.key", "x") }), ok},
		{"no status", chat(func(a pcommon.Map) { a.Remove(telemetry.AttrStatus) }), missing},
		{"no gaps", chat(func(a pcommon.Map) { a.Remove(telemetry.AttrGapsMs) }), missing},
		{"no duration", chat(func(a pcommon.Map) { a.Remove(telemetry.AttrDurationMs) }), missing},
		{"status not a string", chat(func(a pcommon.Map) { a.PutInt(telemetry.AttrStatus, 0) }), malformed},
		{"status outside the closed set", chat(func(a pcommon.Map) { a.PutStr(telemetry.AttrStatus, "okay") }), malformed},
		{"duration an int", chat(func(a pcommon.Map) { a.PutInt(telemetry.AttrDurationMs, 100) }), malformed},
		{"duration NaN", chat(func(a pcommon.Map) { a.PutDouble(telemetry.AttrDurationMs, math.NaN()) }), malformed},
		{"negative tokens", chat(func(a pcommon.Map) { a.PutInt(telemetry.AttrEmittedTokens, -4) }), malformed},
		{"phase not a float", chat(func(a pcommon.Map) { a.PutStr(telemetry.AttrPhasePrefix+"decode_ms", "1") }), malformed},
		{"gaps fewer than retained", chat(func(a pcommon.Map) {
			g, _ := a.Get(telemetry.AttrGapsMs)
			g.Slice().RemoveIf(func(pcommon.Value) bool { return true })
		}), malformed},
		{"a gap not a number", chat(func(a pcommon.Map) {
			g, _ := a.Get(telemetry.AttrGapsMs)
			g.Slice().At(1).SetStr("20")
		}), malformed},
		{"a gap negative", chat(func(a pcommon.Map) {
			g, _ := a.Get(telemetry.AttrGapsMs)
			g.Slice().At(1).SetDouble(-1)
		}), malformed},
		{"more gaps than tokens", chat(func(a pcommon.Map) { a.PutInt(telemetry.AttrEmittedTokens, 2) }), malformed},
		{"text completion: ITL and tokens only", func(ss ptrace.ScopeSpans) {
			chatSpan(ss, 4, 20).SetName("text_completion kiln-tiny")
		}, counted{Tokens: 4, ITL: 3}},
		{"a phase child is not counted", func(ss ptrace.ScopeSpans) {
			ss.Spans().AppendEmpty().SetName(telemetry.SpanActorPrefill)
		}, counted{}},
		{"stall", func(ss ptrace.ScopeSpans) { stallSpan(ss, "actor_prefill", 300) }, counted{Stalls: 1}},
		{"stall at the threshold", func(ss ptrace.ScopeSpans) { stallSpan(ss, "unexplained", 250) }, counted{Stalls: 1}},
		{"stall below the threshold", func(ss ptrace.ScopeSpans) { stallSpan(ss, "actor_prefill", 249.999) }, malformed},
		{"stall of an unknown reason", func(ss ptrace.ScopeSpans) { stallSpan(ss, "cosmic_rays", 300) }, malformed},
		{"stall without a reason", func(ss ptrace.ScopeSpans) {
			stallSpan(ss, "actor_prefill", 300).Attributes().Remove(telemetry.AttrStallReason)
		}, missing},
		{"stall gap a string", func(ss ptrace.ScopeSpans) {
			stallSpan(ss, "actor_prefill", 300).Attributes().PutStr(telemetry.AttrStallGapMs, "300")
		}, malformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, countOne(t, tc.build)); diff != "" {
				t.Errorf("counted (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOtherServicesUntouched: spans of another instrumentation scope are
// neither counted nor changed, even when named like Kiln's.
func TestOtherServicesUntouched(t *testing.T) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	ss.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
	chatSpan(ss, 4, 20)
	stallSpan(ss, "actor_prefill", 300)
	before := ptrace.NewTraces()
	td.CopyTo(before)
	c := newConnector(connectorSettings(), &Config{FlushInterval: 1}, nil, telemetry.Buckets())
	if err := c.ConsumeTraces(t.Context(), td); err != nil {
		t.Fatal(err)
	}
	if got := (counted{Tokens: c.st.tokens, ITL: c.st.itl.n, Dropped: c.st.dropped}); got != (counted{}) {
		t.Errorf("another service's spans were counted: %+v", got)
	}
	m := ptrace.ProtoMarshaler{}
	a, _ := m.MarshalTraces(before)
	b, _ := m.MarshalTraces(td)
	if !cmp.Equal(a, b) {
		t.Error("the connector changed the spans it read")
	}
}

// FuzzDecode sets one attribute of a well-formed chat span and of a stall
// span to an arbitrary value: the connector never panics, and each span
// is either counted or dropped, never both, never neither.
func FuzzDecode(f *testing.F) {
	f.Add(telemetry.AttrStatus, uint8(0), int64(0), 0.0, "ok")
	f.Add(telemetry.AttrGapsMs, uint8(4), int64(3), 20.0, "")
	f.Add(telemetry.AttrRetainedGapSamples, uint8(1), int64(9000), 0.0, "")
	f.Add(telemetry.AttrStallGapMs, uint8(2), int64(0), math.Inf(1), "")
	f.Add(telemetry.AttrPhasePrefix+"prefill_ms", uint8(2), int64(0), math.Copysign(0, -1), "")
	f.Add(telemetry.AttrStallReason, uint8(0), int64(0), 0.0, "actor_decode")
	f.Fuzz(func(t *testing.T, key string, kind uint8, i int64, fl float64, s string) {
		set := func(a pcommon.Map) {
			switch kind % 6 {
			case 0:
				a.PutStr(key, s)
			case 1:
				a.PutInt(key, i)
			case 2:
				a.PutDouble(key, fl)
			case 3:
				a.PutBool(key, i%2 == 0)
			case 4:
				sl := a.PutEmptySlice(key)
				for range i & 15 {
					sl.AppendEmpty().SetDouble(fl)
				}
			case 5:
				a.Remove(key)
			}
		}
		got := countOne(t, func(ss ptrace.ScopeSpans) {
			set(chatSpan(ss, 4, 20).Attributes())
			set(stallSpan(ss, "actor_prefill", 300).Attributes())
		})
		if n := got.Requests + got.Stalls + got.Dropped[dropMissing] + got.Dropped[dropMalformed]; n != 2 {
			t.Fatalf("two spans, %d outcomes: %+v", n, got)
		}
		if got.Requests == 1 && got.ITL > got.Tokens {
			t.Fatalf("more ITL observations than tokens: %+v", got)
		}
	})
}
