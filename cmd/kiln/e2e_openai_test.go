package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sdkRun is what examples/clients/stream-timing.mjs --json prints.
type sdkRun struct {
	Chunks   []map[string]any `json:"chunks"`
	Events   []map[string]any `json:"events"`
	Order    []string         `json:"order"`
	Summary  map[string]any   `json:"summary"`
	Response map[string]any   `json:"response"`
}

// requireSDK skips (fails in CI) when the openai npm package is not
// installed under dir.
func requireSDK(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		msg := "the openai npm package is not installed: run scripts/install-e2e"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

func runSDK(t *testing.T, baseURL string, args ...string) sdkRun {
	t.Helper()
	node := requireTool(t, "node")
	dir := filepath.Join(repoRoot(t), "examples", "clients")
	requireSDK(t, dir)
	cmd := exec.Command(node, append([]string{"stream-timing.mjs", "--json", "--base-url", baseURL + "/v1"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("openai SDK run failed: %v\n%s", err, stderr)
	}
	var r sdkRun
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("SDK output is not JSON: %v\n%s", err, out)
	}
	return r
}

// TestOpenAISDK drives kiln serve with the official openai npm package,
// unmodified: a non-streaming and a streaming chat, without and with the
// include_performance opt-in passed as an extra body field.
func TestOpenAISDK(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	requireTool(t, "node")
	srv := startServe(t)

	t.Run("streaming without opt-in is a pure OpenAI stream", func(t *testing.T) {
		r := runSDK(t, srv.URL, "--no-timing", "--max-tokens", "6", "Tell me a story.")
		if len(r.Events) != 0 {
			t.Errorf("got %d kiln.token_timing events without opt-in, want 0", len(r.Events))
		}
		if r.Summary != nil {
			t.Errorf("terminal chunk carries metadata without opt-in: %v", r.Summary)
		}
		for i, c := range r.Chunks {
			if c["object"] != "chat.completion.chunk" {
				t.Errorf("chunk %d object = %v, want chat.completion.chunk", i, c["object"])
			}
			if _, ok := c["metadata"]; ok {
				t.Errorf("chunk %d has a metadata key without opt-in", i)
			}
		}
		if len(r.Chunks) == 0 {
			t.Fatal("no chunks")
		}
	})

	t.Run("streaming with include_performance", func(t *testing.T) {
		r := runSDK(t, srv.URL, "--max-tokens", "8", "Explain the pause.")
		if len(r.Events) == 0 {
			t.Fatal("no kiln.token_timing events with include_performance: true")
		}
		for i, e := range r.Events {
			if got := int(e["token_index"].(float64)); got != i {
				t.Errorf("event %d token_index = %d, want %d", i, got, i)
			}
			if len(e) != 14 {
				t.Errorf("event %d has %d fields, want 14: %v", i, len(e), e)
			}
		}
		if r.Events[0]["blocking_phase"] != nil || r.Events[0]["blocking_phase_ms"] != nil {
			t.Errorf("first event has blocking fields %v/%v, want null", r.Events[0]["blocking_phase"], r.Events[0]["blocking_phase_ms"])
		}
		// Each timing event follows its token's content chunk: at every point
		// of the stream there are no more timing events than content chunks
		// (one allowance for a final end-of-sequence token, whose text is
		// empty), and the finish chunk comes after all of them.
		timings, contents, finish := 0, 0, -1
		for i, o := range r.Order {
			switch o {
			case "timing":
				timings++
				if timings > contents+1 || (timings > contents && i != len(r.Order)-2) {
					t.Errorf("timing event %d at position %d precedes its content: order %v", timings-1, i, r.Order)
				}
			case "content":
				contents++
			case "finish":
				finish = i
			}
		}
		if timings != len(r.Events) || finish != len(r.Order)-1 {
			t.Errorf("order %v: want every timing event before the finish chunk, finish last", r.Order)
		}
		if r.Summary == nil {
			t.Fatal("terminal chunk has no metadata.performance.latency")
		}
		if got := int(r.Summary["emitted_tokens"].(float64)); got != len(r.Events) {
			t.Errorf("summary emitted_tokens = %d, events = %d", got, len(r.Events))
		}
		if got := int(r.Summary["gap_samples"].(float64)); got != len(r.Events)-1 {
			t.Errorf("summary gap_samples = %d, want %d", got, len(r.Events)-1)
		}
	})

	t.Run("non-streaming with include_performance", func(t *testing.T) {
		r := runSDK(t, srv.URL, "--non-stream", "--max-tokens", "5", "Hello.")
		choices, _ := r.Response["choices"].([]any)
		if len(choices) != 1 {
			t.Fatalf("response choices = %v", r.Response["choices"])
		}
		meta, _ := r.Response["metadata"].(map[string]any)
		perf, _ := meta["performance"].(map[string]any)
		lat, _ := perf["latency"].(map[string]any)
		if lat == nil {
			t.Fatalf("no metadata.performance.latency in %v", r.Response)
		}
		phases, _ := lat["phases"].(map[string]any)
		if v, ok := phases["client_delivery_ms"]; !ok || v != nil {
			t.Errorf("non-streaming client_delivery_ms = %v (present %v), want null", v, ok)
		}
	})
}

// The example helpers of examples/clients (kiln-timing.mjs with the real
// openai npm package, kiln_timing.py) against the built binary: the loop
// that reads content and timing from one stream must print the same text
// the server generates and one timing row per emitted token.

// clientRun is what a helper printed: the content, then a blank line, the
// timing table, and the summary line.
type clientRun struct {
	content string
	rows    [][]string // the table's rows without the header
	summary string
}

// parseClientOutput splits a helper's output at its table header.
func parseClientOutput(t *testing.T, out string) clientRun {
	t.Helper()
	head := strings.Index(out, "\n\n")
	if head < 0 {
		t.Fatalf("no blank line between the content and the table:\n%s", out)
	}
	r := clientRun{content: out[:head]}
	lines := strings.Split(strings.TrimSpace(out[head:]), "\n")
	want := []string{"idx", "token", "ready_ms", "enqueued_ms", "queue_ms", "blocking_phase", "blocking_ms"}
	if diff := cmp.Diff(want, strings.Fields(lines[0])); diff != "" {
		t.Fatalf("table header (-want +got):\n%s\n%s", diff, out)
	}
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "TTFT ") {
			r.summary = l
			continue
		}
		if f := strings.Fields(l); len(f) == len(want) {
			r.rows = append(r.rows, f)
		}
	}
	return r
}

// checkRows asserts one row per token, in order, with null blocking on the
// first token only.
func checkRows(t *testing.T, r clientRun, tokens int) {
	t.Helper()
	if len(r.rows) != tokens {
		t.Fatalf("%d timing rows, want %d (one per completion token)", len(r.rows), tokens)
	}
	for i, row := range r.rows {
		if row[0] != strconv.Itoa(i) {
			t.Errorf("row %d idx = %s", i, row[0])
		}
		if first := row[5] == "null"; first != (i == 0) {
			t.Errorf("row %d blocking_phase = %s: want null exactly on the first token", i, row[5])
		}
	}
	if !strings.Contains(r.summary, "ITL p50") {
		t.Errorf("no summary line (%q)", r.summary)
	}
}

// reference returns the greedy completion of prompt without streaming and
// its completion token count.
func reference(t *testing.T, srv *serveProcess, prompt string, maxTokens int) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := srv.chat(ctx, t, map[string]any{
		"model": "kiln-tiny", "max_tokens": maxTokens, "temperature": 0,
		"messages": []map[string]any{{"role": "user", "content": prompt}},
	})
	var resp struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("reference completion: %v: %s", err, out)
	}
	return resp.Choices[0].Message.Content, resp.Usage.CompletionTokens
}

// TestClientHelpers runs the README's loops: the openai npm package with
// kiln-timing.mjs, and kiln_timing.py on a live SSE stream and on its
// captured transcript.
func TestClientHelpers(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	srv := startServe(t)
	const prompt, maxTokens = "Explain the pause.", 8
	want, tokens := reference(t, srv, prompt, maxTokens)
	dir := filepath.Join(repoRoot(t), "examples", "clients")

	t.Run("node SDK loop", func(t *testing.T) {
		requireTool(t, "node")
		requireSDK(t, dir)
		cmd := exec.Command("node", "chat-with-timing.mjs", "--base-url", srv.URL+"/v1",
			"--max-tokens", strconv.Itoa(maxTokens), prompt)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chat-with-timing.mjs: %v\n%s", err, stderrOf(err))
		}
		r := parseClientOutput(t, string(out))
		if r.content != want {
			t.Errorf("streamed content %q, want the non-streaming completion %q", r.content, want)
		}
		checkRows(t, r, tokens)
	})

	t.Run("python helper on a live stream", func(t *testing.T) {
		py := requireTool(t, "python3")
		body, _ := json.Marshal(map[string]any{
			"model": "kiln-tiny", "stream": true, "include_performance": true, "max_tokens": maxTokens, "temperature": 0,
			"messages": []map[string]any{{"role": "user", "content": prompt}},
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sse := srv.chatRaw(ctx, t, body)
		cmd := exec.Command(py, "kiln_timing.py")
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(sse)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kiln_timing.py: %v\n%s", err, stderrOf(err))
		}
		r := parseClientOutput(t, strings.TrimSuffix(string(out), "\n"))
		if r.content != want {
			t.Errorf("python content %q, want %q", r.content, want)
		}
		checkRows(t, r, tokens)
		if n := countTimingEvents(sse); n != tokens {
			t.Errorf("the stream has %d kiln.token_timing events, want %d", n, tokens)
		}
	})

	t.Run("python unit tests on the captured transcript", func(t *testing.T) {
		py := requireTool(t, "python3")
		cmd := exec.Command(py, "-B", "-m", "unittest", "discover", "-s", dir)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("python3 -m unittest: %v\n%s", err, out)
		}
	})
}

// countTimingEvents counts the data lines whose object is kiln.token_timing.
func countTimingEvents(sse []byte) int {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(sse))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `data: {"object":"kiln.token_timing"`) {
			n++
		}
	}
	return n
}

func stderrOf(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}

// chatRaw posts a chat completion body and returns the raw response body
// (the SSE stream when it asks for one).
func (p *serveProcess) chatRaw(ctx context.Context, t *testing.T, body []byte) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("chat: HTTP %d, %v: %s", resp.StatusCode, err, out)
	}
	return out
}
