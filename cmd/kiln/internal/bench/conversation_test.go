package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPromptsSystemAndTurns(t *testing.T) {
	plain := Workload{PromptTokens: 6, Seed: 7}
	shared := Workload{PromptTokens: 6, Seed: 7, SystemPromptTokens: 40}
	a, _ := plain.Prompts(3)
	b, err := shared.Prompts(3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		if len(b[i]) != 2 || b[i][0].Role != "system" || b[i][1].Role != "user" {
			t.Fatalf("prompt %d = %+v, want a system then a user message", i, b[i])
		}
		if got := len(strings.Fields(b[i][0].Content)); got != 40 {
			t.Errorf("system prompt %d has %d words, want 40", i, got)
		}
		if b[i][0] != b[0][0] {
			t.Errorf("prompt %d's system message differs from prompt 0's: the prefix must be shared", i)
		}
		// The system prompt has its own random stream: the user messages
		// are those of the same seed without it.
		if diff := cmp.Diff(a[i][0], b[i][1]); diff != "" {
			t.Errorf("prompt %d's user message changed with the system prompt (-without +with):\n%s", i, diff)
		}
	}
	if b[0][1] == b[1][1] {
		t.Error("two users sent the same message")
	}

	conv := Workload{PromptTokens: 5, Seed: 7, SystemPromptTokens: 10, Turns: 3}
	c, _ := conv.Prompts(2)
	for i, p := range c {
		roles := make([]string, len(p))
		for j, m := range p {
			roles[j] = m.Role
		}
		if diff := cmp.Diff([]string{"system", "user", "user", "user"}, roles); diff != "" {
			t.Errorf("conversation %d roles (-want +got):\n%s", i, diff)
		}
	}
	if c[0][1] == c[0][2] || c[0][1] == c[1][1] {
		t.Error("turns or conversations repeat a user message")
	}
}

func TestWorkloadValidateNew(t *testing.T) {
	base := Workload{Concurrency: 1, Requests: 1, MaxTokens: 1, PromptTokens: 1}
	for _, tc := range []struct {
		name string
		edit func(*Workload)
		want string
	}{
		{"negative system prompt", func(w *Workload) { w.SystemPromptTokens = -1 }, "--system-prompt-tokens"},
		{"negative turns", func(w *Workload) { w.Turns = -2 }, "--turns"},
		{"turns with a prompts file", func(w *Workload) { w.PromptsFile, w.Turns = "p.jsonl", 3 }, "--prompts"},
		{"system prompt with a prompts file", func(w *Workload) { w.PromptsFile, w.SystemPromptTokens = "p.jsonl", 3 }, "--prompts"},
		{"fine", func(w *Workload) { w.SystemPromptTokens, w.Turns = 1000, 8 }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := base
			tc.edit(&w)
			err := w.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestConversation(t *testing.T) {
	sys := Message{Role: "system", Content: "S"}
	u := func(s string) Message { return Message{Role: "user", Content: s} }
	a := func(s string) Message { return Message{Role: "assistant", Content: s} }
	prompt := []Message{sys, u("u1"), u("u2"), u("u3")}
	replies := []string{"r1", "r2"}
	for _, tc := range []struct {
		turn int
		want []Message
	}{
		{1, []Message{sys, u("u1")}},
		{2, []Message{sys, u("u1"), a("r1"), u("u2")}},
		{3, []Message{sys, u("u1"), a("r1"), u("u2"), a("r2"), u("u3")}},
	} {
		if diff := cmp.Diff(tc.want, Conversation(prompt, tc.turn, replies[:tc.turn-1])); diff != "" {
			t.Errorf("turn %d (-want +got):\n%s", tc.turn, diff)
		}
	}
}

func intp(n int) *int { return &n }

// TestClientPromptAndCachedTokens: the prompt and cached token counts come
// from the OpenAI usage fields (Kiln) or from llama-server's timings, in a
// stream and in a whole response, and stay null when a server says
// nothing.
func TestClientPromptAndCachedTokens(t *testing.T) {
	content := `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`
	for _, tc := range []struct {
		name       string
		final      string // the last chunk's members after "choices"
		wantPrompt *int
		wantCached *int
		wantFrom   string
	}{
		{"kiln usage with cached tokens",
			`"usage":{"prompt_tokens":120,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":96}}`,
			intp(120), intp(96), CachedFromUsage},
		{"kiln usage with zero cached tokens",
			`"usage":{"prompt_tokens":120,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}`,
			intp(120), intp(0), CachedFromUsage},
		{"usage without details",
			`"usage":{"prompt_tokens":120,"completion_tokens":1}`,
			intp(120), nil, ""},
		{"llama-server with cache_n",
			`"usage":{"prompt_tokens":120,"completion_tokens":1},"timings":{"cache_n":100,"prompt_n":20,"prompt_ms":5.5}`,
			intp(120), intp(100), CachedFromCacheN},
		{"older llama-server: prompt_n only",
			`"usage":{"prompt_tokens":120,"completion_tokens":1},"timings":{"prompt_n":30,"prompt_ms":5.5}`,
			intp(120), intp(90), CachedFromPromptN},
		{"usage wins over timings",
			`"usage":{"prompt_tokens":120,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":7}},"timings":{"cache_n":100}`,
			intp(120), intp(7), CachedFromUsage},
		{"prompt_n past the prompt is not believed",
			`"usage":{"prompt_tokens":10,"completion_tokens":1},"timings":{"prompt_n":30}`,
			intp(10), nil, ""},
		{"nothing said", `"usage":{"completion_tokens":1}`, nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			final := `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}],` + tc.final + `}`
			check := func(kind string, s Sample) {
				t.Helper()
				if s.Error != "" {
					t.Fatalf("%s: %s", kind, s.Error)
				}
				if diff := cmp.Diff(tc.wantPrompt, s.PromptTokens); diff != "" {
					t.Errorf("%s prompt tokens (-want +got):\n%s", kind, diff)
				}
				if diff := cmp.Diff(tc.wantCached, s.CachedTokens); diff != "" {
					t.Errorf("%s cached tokens (-want +got):\n%s", kind, diff)
				}
				if s.CachedFrom != tc.wantFrom {
					t.Errorf("%s cached from %q, want %q", kind, s.CachedFrom, tc.wantFrom)
				}
			}
			srv := sseServer(t, []string{content, final, "[DONE]"}, http.StatusOK)
			c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
			var s Sample
			c.Do(context.Background(), &Workload{Model: "m", MaxTokens: 1, Stream: true}, []Message{{Role: "user", Content: "hi"}}, 1, &s)
			check("stream", s)

			whole := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"a"},"finish_reason":"length"}],`+tc.final+`}`)
			}))
			defer whole.Close()
			c = &Client{BaseURL: whole.URL, HTTP: whole.Client()}
			s = Sample{}
			c.Do(context.Background(), &Workload{Model: "m", MaxTokens: 1}, []Message{{Role: "user", Content: "hi"}}, 1, &s)
			check("whole", s)
		})
	}
}

// convServer is a chat endpoint for conversation runs: it records every
// request's messages and streams the reply "r<n>" for a request with n
// user messages, with usage saying 10 prompt tokens a message, of which
// all but the last user message's are cached.
type convServer struct {
	mu   sync.Mutex
	seen [][]Message
	fail int // fail the request with this many user messages (0: none)
}

func (cs *convServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cs.mu.Lock()
	cs.seen = append(cs.seen, req.Messages)
	cs.mu.Unlock()
	users := 0
	for _, m := range req.Messages {
		if m.Role == "user" {
			users++
		}
	}
	if users == cs.fail {
		http.Error(w, `{"error":{"message":"no"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	prompt := 10 * len(req.Messages)
	for _, l := range []string{
		`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"r"},"finish_reason":null}]}`,
		fmt.Sprintf(`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"%d"},"finish_reason":"length"}]}`, users),
		fmt.Sprintf(`{"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":%d}}}`, prompt, prompt-10),
		"[DONE]",
	} {
		fmt.Fprintf(w, "data: %s\n\n", l)
	}
}

func TestRunConversations(t *testing.T) {
	cs := &convServer{}
	srv := httptest.NewServer(cs)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
	w := &Workload{Model: "m", Concurrency: 2, Requests: 2, MaxTokens: 2, PromptTokens: 3, SystemPromptTokens: 4, Turns: 3, Stream: true}
	res, err := Run(context.Background(), c, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Samples) != 6 || res.Stats.Failed != 0 {
		t.Fatalf("samples %d failed %d, want 6 and 0", len(res.Samples), res.Stats.Failed)
	}
	for i, s := range res.Samples {
		if s.Seq != i || s.Conversation != i/3 || s.Turn != i%3+1 || s.Prompt != i/3 {
			t.Errorf("sample %d: seq %d conversation %d turn %d prompt %d", i, s.Seq, s.Conversation, s.Turn, s.Prompt)
		}
		if want := fmt.Sprintf("r%d", s.Turn); s.Reply != want {
			t.Errorf("sample %d reply %q, want %q", i, s.Reply, want)
		}
	}
	// The third turn of each conversation carried the replies of the
	// first two.
	prompts, _ := w.Prompts(2)
	for conv := range 2 {
		want := Conversation(prompts[conv], 3, []string{"r1", "r2"})
		found := false
		for _, got := range cs.seen {
			if cmp.Equal(want, got) {
				found = true
			}
		}
		if !found {
			t.Errorf("no request carried conversation %d's third turn %+v", conv, want)
		}
	}
	p := func(f float64) *float64 { return &f }
	for i, ts := range res.Stats.Turns {
		turn := i + 1
		msgs := float64(2 * turn) // system, the users and the replies before
		if ts.Turn != turn || ts.Requests != 2 || ts.Failed != 0 || ts.OutputTokensP50 != 2 {
			t.Errorf("turn %d: %+v", turn, ts)
		}
		if diff := cmp.Diff(p(10*msgs), ts.PromptTokensP50); diff != "" {
			t.Errorf("turn %d prompt tokens (-want +got):\n%s", turn, diff)
		}
		if diff := cmp.Diff(p(10*msgs-10), ts.CachedTokensP50); diff != "" {
			t.Errorf("turn %d cached tokens (-want +got):\n%s", turn, diff)
		}
	}
	if len(res.Stats.Turns) != 3 || res.Stats.CachedReported != 6 || res.Stats.PromptTokens != 2*(20+40+60) {
		t.Errorf("turns %d, cached reported %d, prompt tokens %d; want 3, 6, 240",
			len(res.Stats.Turns), res.Stats.CachedReported, res.Stats.PromptTokens)
	}
}

// TestRunConversationStopsAtFailure: a turn that fails ends its
// conversation (the next turn would need its reply).
func TestRunConversationStopsAtFailure(t *testing.T) {
	cs := &convServer{fail: 2}
	srv := httptest.NewServer(cs)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
	w := &Workload{Model: "m", Concurrency: 1, Requests: 1, MaxTokens: 2, PromptTokens: 3, Turns: 4, Stream: true}
	res, err := Run(context.Background(), c, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Samples) != 2 || res.Stats.Failed != 1 || len(cs.seen) != 2 {
		t.Fatalf("samples %d failed %d requests %d; want 2, 1, 2", len(res.Samples), res.Stats.Failed, len(cs.seen))
	}
	if got := res.Stats.Turns; len(got) != 2 || got[1].Failed != 1 || got[1].PromptTokensP50 != nil {
		t.Errorf("turn stats %+v, want turn 2 failed with no prompt tokens", got)
	}
}

func TestSummarizeTurns(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	samples := []Sample{
		{Turn: 1, TTFTMs: f(10), E2EMs: 20, OutputTokens: 4, PromptTokens: intp(100), CachedTokens: intp(0)},
		{Turn: 1, TTFTMs: f(30), E2EMs: 40, OutputTokens: 4, PromptTokens: intp(110), CachedTokens: intp(0)},
		{Turn: 1, Error: "HTTP 500"},
		{Turn: 2, TTFTMs: f(5), E2EMs: 15, OutputTokens: 4, PromptTokens: intp(250)},
	}
	want := []TurnStats{
		{Turn: 1, Requests: 3, Failed: 1, TTFTP50Ms: 20, E2EP50Ms: 30, OutputTokensP50: 4, PromptTokensP50: f(105), CachedTokensP50: f(0)},
		{Turn: 2, Requests: 1, TTFTP50Ms: 5, E2EP50Ms: 15, OutputTokensP50: 4, PromptTokensP50: f(250)},
	}
	if diff := cmp.Diff(want, summarizeTurns(samples)); diff != "" {
		t.Errorf("summarizeTurns (-want +got):\n%s", diff)
	}
	if got := summarizeTurns([]Sample{{E2EMs: 1}}); got != nil {
		t.Errorf("single-turn samples gave turn stats %+v", got)
	}
}

// TestWarmup: the warm-up requests are short user messages that share
// nothing with the workload's prompts.
func TestWarmup(t *testing.T) {
	cs := &convServer{}
	srv := httptest.NewServer(cs)
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
	w := &Workload{Model: "m", Concurrency: 4, Requests: 8, MaxTokens: 64, PromptTokens: 30, SystemPromptTokens: 100, Turns: 8, Stream: true}
	if err := Warmup(context.Background(), c, w, 2); err != nil {
		t.Fatal(err)
	}
	if len(cs.seen) != 2 {
		t.Fatalf("%d warm-up requests, want 2", len(cs.seen))
	}
	for _, msgs := range cs.seen {
		if len(msgs) != 1 || msgs[0].Role != "user" || !strings.HasPrefix(msgs[0].Content, "warm up ") {
			t.Errorf("warm-up messages %+v, want one user message starting \"warm up\"", msgs)
		}
	}
	cs.fail = 1
	if err := Warmup(context.Background(), c, w, 1); err == nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Errorf("Warmup against a failing server = %v, want the HTTP 500", err)
	}
}

func TestWriteTurns(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	arms := []*ArmResult{
		{Name: "plain", Stats: Stats{}},
		{Name: "chat", Stats: Stats{Turns: []TurnStats{
			{Turn: 1, Requests: 1, TTFTP50Ms: 812.26, E2EP50Ms: 1500, OutputTokensP50: 32, PromptTokensP50: f(420)},
			{Turn: 2, Requests: 1, TTFTP50Ms: 95.5, E2EP50Ms: 800, OutputTokensP50: 32, PromptTokensP50: f(560), CachedTokensP50: f(452)},
		}}},
	}
	var b strings.Builder
	if err := WriteTurns(&b, arms); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "plain") {
		t.Errorf("an arm without turns got a turn table:\n%s", out)
	}
	for _, want := range []string{"chat, by turn", "812.3", "420", "n/a", "452"} {
		if !strings.Contains(out, want) {
			t.Errorf("turn table lacks %q:\n%s", want, out)
		}
	}
}

// TestWriteTableNotReported: figures a server did not report are n/a, not
// zero, and have no ratio.
func TestWriteTableNotReported(t *testing.T) {
	held := int64(3 << 20)
	arms := []*ArmResult{
		{Name: "off", Stats: Stats{Requests: 16, TTFTP50Ms: 900, PromptTokens: 16000}, PrefixCache: &PrefixCacheWatch{}},
		{Name: "on", Stats: Stats{Requests: 16, TTFTP50Ms: 300, PromptTokens: 16000, CachedTokens: 15000, CachedReported: 16},
			PrefixCache: &PrefixCacheWatch{PeakBytes: &held, After: PrefixCacheReading{Bytes: &held}}},
	}
	var b strings.Builder
	if err := WriteTable(&b, arms); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		f := strings.Fields(l)
		if len(f) > 0 {
			lines[strings.Join(f[:len(f)-3], " ")] = strings.Join(f[len(f)-3:], " ")
		}
	}
	for row, want := range map[string]string{
		"TTFT p50 ms":             "900.00 300.00 0.33x",
		"cached tokens":           "n/a 15000 -",
		"prefix cache MiB, peak":  "n/a 3.00 -",
		"prefix cache MiB, after": "n/a 3.00 -",
		"of which idle":           "n/a n/a -",
	} {
		if got := lines[row]; got != want {
			t.Errorf("row %q = %q, want %q\n%s", row, got, want, b.String())
		}
	}
}

// closingServer answers chat requests with a one-token stream, except the
// requests whose number (from 1) is in drop: it reads those and closes the
// connection without answering, as a server closing a kept-alive
// connection does.
func closingServer(t *testing.T, drop ...int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(drop, int(n.Add(1))) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestClientRetriesClosedKeepAlive: a request that meets a kept-alive
// connection the server closed is sent once more on a new connection and
// counted; a second failure is the sample's error.
func TestClientRetriesClosedKeepAlive(t *testing.T) {
	w := &Workload{Model: "m", MaxTokens: 1, Stream: true}
	msgs := []Message{{Role: "user", Content: "hi"}}
	for _, tc := range []struct {
		name        string
		drop        []int
		wantRetries int
		wantErr     bool
		wantServed  int64
	}{
		{"closed once", []int{2}, 1, false, 3},
		{"closed twice", []int{2, 3}, 1, true, 3},
		{"never closed", nil, 0, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := closingServer(t, tc.drop...)
			c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
			var first Sample
			c.Do(context.Background(), w, msgs, 1, &first) // opens the connection the next one reuses
			if first.Error != "" {
				t.Fatalf("first request: %s", first.Error)
			}
			var s Sample
			c.Do(context.Background(), w, msgs, 2, &s)
			if s.Retries != tc.wantRetries || (s.Error != "") != tc.wantErr || n.Load() != tc.wantServed {
				t.Errorf("retries %d error %q requests seen %d; want %d, error %v, %d",
					s.Retries, s.Error, n.Load(), tc.wantRetries, tc.wantErr, tc.wantServed)
			}
		})
	}
}

func TestClosedUnder(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("post: %w", io.EOF), true},
		{&net.OpError{Op: "write", Err: net.ErrClosed}, true},
		{&net.OpError{Op: "write", Err: syscall.EPIPE}, true},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, false},
		{context.DeadlineExceeded, false},
	} {
		if got := closedUnder(tc.err); got != tc.want {
			t.Errorf("closedUnder(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
