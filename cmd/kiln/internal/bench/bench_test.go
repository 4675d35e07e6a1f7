package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// TestPercentile pins the type-7 percentiles the comparison table quotes
// (computed by the latency core, as the server's own summaries are).
func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 0.5, 0},
		{"one", []float64{7}, 0.99, 7},
		{"two median", []float64{1, 3}, 0.5, 2},
		{"type 7 p99 of 1..100", seq(100), 0.99, 99.01},
		{"max", []float64{1, 2, 3}, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := latency.Percentile(tt.in, tt.p); fmt.Sprintf("%.6f", got) != fmt.Sprintf("%.6f", tt.want) {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.in, tt.p, got, tt.want)
			}
		})
	}
}

func seq(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i + 1)
	}
	return s
}

func TestParseArm(t *testing.T) {
	tests := []struct {
		in      string
		want    Arm
		wantErr bool
	}{
		{in: "small:prefill-chunk=8", want: Arm{Name: "small", Flag: "prefill-chunk", Value: "8"}},
		{in: "big:--prefill-chunk=512", want: Arm{Name: "big", Flag: "prefill-chunk", Value: "512"}},
		{in: "noflag", wantErr: true},
		{in: ":x=1", wantErr: true},
		{in: "a:novalue", wantErr: true},
		{in: "a:addr=1.2.3.4:1", wantErr: true},
		{in: "baseline:", want: Arm{Name: "baseline"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseArm(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseArm(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseArm(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestPromptsAreSourceBound(t *testing.T) {
	w := Workload{PromptTokens: 12, PromptMix: []int{3, 50}, Seed: 42}
	a, err := w.Prompts(4)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := w.Prompts(4)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed gave different prompts (-first +second):\n%s", diff)
	}
	for i, want := range []int{3, 50, 3, 50} {
		if got := len(strings.Fields(a[i][0].Content)); got != want {
			t.Errorf("prompt %d has %d words, want %d", i, got, want)
		}
	}
	w.Seed = 43
	c, _ := w.Prompts(4)
	if cmp.Equal(a, c) {
		t.Error("a different seed gave the same prompts")
	}
}

// sseServer answers every chat completion with the given SSE lines.
func sseServer(t *testing.T, lines []string, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		if status != http.StatusOK {
			http.Error(w, `{"error":{"message":"busy"}}`, status)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, l := range lines {
			fmt.Fprintf(w, "data: %s\n\n", l)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClientStreamParsing(t *testing.T) {
	timing := func(i int, ready float64, phase string) string {
		bp, bpm := "null", "null"
		if phase != "" {
			bp, bpm = `"`+phase+`"`, "300.0"
		}
		return fmt.Sprintf(`{"object":"kiln.token_timing","source":"batching_engine","token_index":%d,"token_id":5,"ready_ms":%g,"producer_delivered_ms":%g,"handler_received_ms":%g,"body_enqueued_ms":%g,"response_delivery_ms":0,"handler_queue_ms":0,"queue_delay_ms":0,"client_delivery_ms":0,"blocking_phase":%s,"blocking_phase_ms":%s}`, i, ready, ready, ready, ready, bp, bpm)
	}
	content := func(s string) string {
		return `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + s + `"},"finish_reason":null}]}`
	}
	lines := []string{
		`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		content("a"), timing(0, 10, ""),
		content("b"), timing(1, 320, "actor_prefill"),
		`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}],"metadata":{"performance":{"latency":{"stall_count":1,"stall_reasons":{"actor_prefill":1,"unexplained":0}}}}}`,
		`{"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
		`[DONE]`,
	}
	srv := sseServer(t, lines, http.StatusOK)
	c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
	w := &Workload{Model: "m", Concurrency: 1, Requests: 1, MaxTokens: 2, PromptTokens: 4, Stream: true, ServerTiming: true}
	var s Sample
	c.Do(context.Background(), w, []Message{{Role: "user", Content: "hi"}}, 1, &s)
	if s.Error != "" {
		t.Fatalf("unexpected error: %s", s.Error)
	}
	if s.TTFTMs == nil || len(s.ChunkMs) != 2 || len(s.GapsMs) != 1 {
		t.Fatalf("client view: ttft %v chunks %d gaps %d, want ttft set, 2 chunks, 1 gap", s.TTFTMs, len(s.ChunkMs), len(s.GapsMs))
	}
	if s.OutputTokens != 2 || !s.UsageTokens || s.FinishReason != "length" {
		t.Errorf("output tokens %d (usage %v) finish %q, want 2 from usage and length", s.OutputTokens, s.UsageTokens, s.FinishReason)
	}
	if got := len(s.Server.Events); got != 2 {
		t.Fatalf("server events = %d, want 2", got)
	}
	if diff := cmp.Diff([]float64{310}, s.Server.ServerGapsMs()); diff != "" {
		t.Errorf("server gaps (-want +got):\n%s", diff)
	}
	st := Summarize([]Sample{s}, 1000)
	if st.ServerStalls != 1 || st.StallsByReason["actor_prefill"] != 1 || len(st.StallsByReason) != 1 {
		t.Errorf("stalls %d by reason %v, want 1 actor_prefill only", st.ServerStalls, st.StallsByReason)
	}
}

func TestClientRecordsFailures(t *testing.T) {
	tests := []struct {
		name   string
		lines  []string
		status int
		want   string
	}{
		{"http 429", nil, http.StatusTooManyRequests, "HTTP 429"},
		{"closed early", []string{`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}`}, http.StatusOK, "without [DONE]"},
		{"garbage", []string{`{not json`}, http.StatusOK, "chunk:"},
		{"error event mid-stream", []string{
			`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`,
			`{"error":{"message":"the engine failed","type":"server_error","param":null,"code":null}}`,
			`[DONE]`,
		}, http.StatusOK, "stream error event: the engine failed"},
		{"finish_reason error", []string{
			`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`,
			`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"error"}]}`,
			`[DONE]`,
		}, http.StatusOK, `finish_reason "error"`},
		{"finish_reason timeout", []string{
			`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"timeout"}]}`,
			`[DONE]`,
		}, http.StatusOK, `finish_reason "timeout"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := sseServer(t, tt.lines, tt.status)
			c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
			w := &Workload{Model: "m", Concurrency: 2, Requests: 3, MaxTokens: 2, PromptTokens: 4, Stream: true}
			res, err := Run(context.Background(), c, w, nil)
			if err != nil {
				t.Fatalf("Run: %v (a failing server is evidence, not a run error)", err)
			}
			if len(res.Samples) != 3 || res.Stats.Failed != 3 || res.Stats.OutputTokens != 0 {
				t.Fatalf("samples %d failed %d output tokens %d, want 3, 3 and 0 (failed samples count no output)",
					len(res.Samples), res.Stats.Failed, res.Stats.OutputTokens)
			}
			for _, s := range res.Samples {
				if !strings.Contains(s.Error, tt.want) {
					t.Errorf("sample %d error %q, want it to mention %q", s.Seq, s.Error, tt.want)
				}
			}
		})
	}
}

// TestClientWholeResponseFailure: a non-streaming completion that finished
// with reason error or timeout is a failed sample too.
func TestClientWholeResponseFailure(t *testing.T) {
	for _, reason := range []string{"error", "timeout"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"a"},"finish_reason":%q}],"usage":{"completion_tokens":1}}`, reason)
		}))
		c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
		var s Sample
		c.Do(context.Background(), &Workload{Model: "m", MaxTokens: 2}, []Message{{Role: "user", Content: "hi"}}, 1, &s)
		srv.Close()
		if want := fmt.Sprintf("finish_reason %q", reason); s.Error != want {
			t.Errorf("finish_reason %s: sample error %q, want %q", reason, s.Error, want)
		}
	}
}
