package telemetry

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/internal/timing"
)

// TestPrefixAttributes: the chat span carries what the prompt took from
// the prefix cache: the GenAI cache-read count and Kiln's four facts, the
// source absent exactly when nothing was reused.
func TestPrefixAttributes(t *testing.T) {
	tests := []struct {
		name string
		use  timing.PrefixUse
		want map[string]any
	}{
		{"miss", timing.PrefixUse{Prefilled: 7, Stop: timing.PrefixStopUncached}, map[string]any{
			AttrGenAIUsageCacheReadInputTokens: int64(0), AttrPrefixCachedTokens: int64(0), AttrPrefixPrefilledTokens: int64(7),
			AttrPrefixStopReason: "uncached",
		}},
		{"off", timing.PrefixUse{Prefilled: 7}, map[string]any{
			AttrGenAIUsageCacheReadInputTokens: int64(0), AttrPrefixCachedTokens: int64(0), AttrPrefixPrefilledTokens: int64(7),
			AttrPrefixStopReason: "off",
		}},
		{"partial", timing.PrefixUse{Cached: 4, Prefilled: 3, Source: timing.PrefixSourceShared, Stop: timing.PrefixStopDiverged}, map[string]any{
			AttrGenAIUsageCacheReadInputTokens: int64(4), AttrPrefixCachedTokens: int64(4), AttrPrefixPrefilledTokens: int64(3),
			AttrPrefixSource: "shared_prefix", AttrPrefixStopReason: "diverged",
		}},
		{"checkpoint", timing.PrefixUse{Cached: 6, Prefilled: 1, Source: timing.PrefixSourceCheckpoint, Stop: timing.PrefixStopPromptEnd}, map[string]any{
			AttrGenAIUsageCacheReadInputTokens: int64(6), AttrPrefixCachedTokens: int64(6), AttrPrefixPrefilledTokens: int64(1),
			AttrPrefixSource: "checkpoint", AttrPrefixStopReason: "prompt_end",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			_, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
			r.End(EndInfo{Outcome: OutcomeOK, PromptTokens: 7, Prefix: tt.use, End: at(msD)})
			spans := h.exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans exported, want the chat span", len(spans))
			}
			got := map[string]any{}
			for k, v := range attrMap(spans[0].Attributes) {
				switch k {
				case AttrGenAIUsageCacheReadInputTokens, AttrPrefixCachedTokens, AttrPrefixPrefilledTokens, AttrPrefixSource, AttrPrefixStopReason:
					got[k] = v
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("prefix-cache attributes (-want +got):\n%s", diff)
			}
		})
	}
}
