package server

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry/latency"
)

// TestNonFiniteFloatsAreNull: NaN and ±Inf are not JSON; the performance
// object and the recent-requests record write them as null, so a client's
// parser never meets them.
func TestNonFiniteFloatsAreNull(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		perf := wire.Performance{OK: true, TotalLatencyMs: v, DecodeTokensPerSec: latency.Float(v), TTFTMs: latency.Float(v)}
		rec := recentRecord{durationMs: v}
		for name, b := range map[string][]byte{"performance": perf.AppendJSON(nil), "recent record": rec.appendJSON(nil)} {
			var obj map[string]any
			if err := json.Unmarshal(b, &obj); err != nil {
				t.Fatalf("%s with %v is not JSON (%v): %s", name, v, err, b)
			}
			for _, key := range []string{"total_latency_ms", "decode_tokens_per_sec", "ttft_ms", "duration_ms"} {
				if got, ok := obj[key]; ok && got != nil {
					t.Errorf("%s with %v: %s = %v, want null", name, v, key, got)
				}
			}
			if !strings.Contains(string(b), "null") {
				t.Errorf("%s with %v wrote no null: %s", name, v, b)
			}
		}
	}
}
