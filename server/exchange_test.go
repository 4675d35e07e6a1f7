package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine"
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

// TestFinishOutcome: the engine's finish reason, the client's state and a
// matched stop sequence map to one finish_reason and outcome. An evicted
// request is a timeout even when its blocked write then failed or its
// client closed: the probe found evictions counted as client_disconnect.
func TestFinishOutcome(t *testing.T) {
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name        string
		finish      engine.FinishReason
		writeErr    error
		clientGone  bool
		stopHit     bool
		wantFinish  string
		wantOutcome telemetry.Outcome
	}{
		{"evicted", engine.FinishEvicted, nil, false, false, "timeout", telemetry.OutcomeTimeout},
		{"evicted then the write failed", engine.FinishEvicted, errors.New("i/o timeout"), false, false, "timeout", telemetry.OutcomeTimeout},
		{"evicted then the client closed", engine.FinishEvicted, nil, true, false, "timeout", telemetry.OutcomeTimeout},
		{"cancelled by the client", engine.FinishCancelled, nil, true, false, "client_disconnect", telemetry.OutcomeClientDisconnect},
		{"write failed", engine.FinishLength, errors.New("broken pipe"), false, false, "client_disconnect", telemetry.OutcomeClientDisconnect},
		{"stop sequence then the client closed", engine.FinishCancelled, nil, true, true, "stop", telemetry.OutcomeOK},
		{"stop token", engine.FinishStop, nil, false, false, "stop", telemetry.OutcomeOK},
		{"length", engine.FinishLength, nil, false, false, "length", telemetry.OutcomeOK},
		{"engine error", engine.FinishError, nil, false, false, "error", telemetry.OutcomeError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, chatPath, nil)
			if tc.clientGone {
				r = r.WithContext(gone)
			}
			x := &exchange{reply: &reply{r: r, writeErr: tc.writeErr}, stopHit: tc.stopHit}
			finish, outcome := x.finish(engine.Result{Finish: tc.finish})
			if d := cmp.Diff([]string{tc.wantFinish, tc.wantOutcome.String()}, []string{finish, outcome.String()}); d != "" {
				t.Errorf("finish, outcome (-want +got):\n%s", d)
			}
		})
	}
}
