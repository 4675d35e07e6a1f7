package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/telemetry"
)

// TestRequestEndReadOnce: the end of a request is one instant. The chat
// span's duration, the response's total_latency_ms and the recent-requests
// record's duration_ms are the same number, for a streamed and a whole
// response.
func TestRequestEndReadOnce(t *testing.T) {
	h, exp := tracedHarness(t)
	for i, stream := range []bool{false, true} {
		status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"include_performance": true, "stream": stream}), nil)
		if status != http.StatusOK {
			t.Fatalf("stream=%v: %d %s", stream, status, body)
		}
		var perf struct {
			TotalLatencyMs float64 `json:"total_latency_ms"`
		}
		whole := body
		if stream {
			// the terminal chunk is the one with metadata
			for _, rec := range sseRecords(t, body) {
				if strings.Contains(rec, `"metadata"`) {
					whole = []byte(rec)
				}
			}
		}
		var resp struct {
			Metadata struct {
				Performance json.RawMessage `json:"performance"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(whole, &resp); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(resp.Metadata.Performance, &perf); err != nil {
			t.Fatalf("performance %s: %v", resp.Metadata.Performance, err)
		}

		spans := waitSpans(t, exp, "POST "+chatPath)
		chats := spanNamed(spans, telemetry.SpanChatPrefix+h.model.ID)
		if len(chats) != i+1 {
			t.Fatalf("%d chat spans after %d requests", len(chats), i+1)
		}
		var spanMs float64
		for _, kv := range chats[i].Attributes {
			if string(kv.Key) == telemetry.AttrDurationMs {
				spanMs = kv.Value.AsFloat64()
			}
		}
		var recent struct {
			Data []struct {
				DurationMs float64 `json:"duration_ms"`
			} `json:"data"`
		}
		h.getJSON("/v1/stats/recent-requests", &recent)
		if len(recent.Data) != i+1 {
			t.Fatalf("%d recent records after %d requests", len(recent.Data), i+1)
		}
		recMs := recent.Data[0].DurationMs
		if perf.TotalLatencyMs <= 0 || spanMs != perf.TotalLatencyMs || recMs != perf.TotalLatencyMs {
			t.Errorf("stream=%v: span %s = %v, total_latency_ms = %v, record duration_ms = %v; want one positive instant",
				stream, telemetry.AttrDurationMs, spanMs, perf.TotalLatencyMs, recMs)
		}
	}
}
