package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readEvidence loads a bench evidence file.
func readEvidence(t *testing.T, path string) evidence {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ev evidence
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("evidence is not JSON: %v", err)
	}
	return ev
}

// clockResolutionMs is the slack allowed between the client's and the
// server's clocks: both are monotonic, but they are different processes'
// readings of it, rounded to nanoseconds and printed as float ms.
const clockResolutionMs = 0.01

// TestBenchEvidenceMatchesServer runs kiln bench against a kiln serve and
// checks its evidence against what the server itself reported.
func TestBenchEvidenceMatchesServer(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	srv := startServe(t)
	out := filepath.Join(t.TempDir(), "evidence.json")
	var stdout, stderr bytes.Buffer
	err := runBench(context.Background(), []string{
		"--url", srv.URL, "--requests", "6", "--concurrency", "3", "--max-tokens", "12",
		"--prompt-tokens", "20", "--server-timing", "--out", out,
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("kiln bench: %v\n%s", err, stderr.String())
	}
	ev := readEvidence(t, out)
	if len(ev.Arms) != 1 {
		t.Fatalf("arms = %d, want 1", len(ev.Arms))
	}
	arm := ev.Arms[0]
	if len(arm.Samples) != 6 || arm.Stats.Failed != 0 {
		t.Fatalf("samples %d failed %d, want 6 and 0", len(arm.Samples), arm.Stats.Failed)
	}
	if len(arm.DecodeAfter) == 0 || arm.MetricsAfter == "" {
		t.Error("evidence lacks the server's /v1/stats/decode or /metrics snapshot")
	}
	for _, s := range arm.Samples {
		if s.Server == nil || len(s.Server.Latency) == 0 {
			t.Fatalf("sample %d has no server view", s.Seq)
		}
		var lat struct {
			EmittedTokens int      `json:"emitted_tokens"`
			TTFTMs        *float64 `json:"ttft_ms"`
		}
		if err := json.Unmarshal(s.Server.Latency, &lat); err != nil {
			t.Fatal(err)
		}
		// Token counts: usage, the timing events and the server's summary.
		if !s.UsageTokens || s.OutputTokens != lat.EmittedTokens || len(s.Server.Events) != lat.EmittedTokens {
			t.Errorf("sample %d: usage tokens %d (from usage %v), events %d, summary emitted_tokens %d: want all equal",
				s.Seq, s.OutputTokens, s.UsageTokens, len(s.Server.Events), lat.EmittedTokens)
		}
		// The client's clock starts before the server receives the request
		// and each event is read after the server enqueued it: the client's
		// view of every token is never earlier than the server's.
		for i, e := range s.Server.Events {
			if s.Server.ReceiptMs[i] < e.BodyEnqueuedMs-clockResolutionMs {
				t.Errorf("sample %d token %d: client receipt %.3f ms before server body_enqueued %.3f ms",
					s.Seq, i, s.Server.ReceiptMs[i], e.BodyEnqueuedMs)
			}
		}
		if s.TTFTMs == nil || lat.TTFTMs == nil || *s.TTFTMs < *lat.TTFTMs-clockResolutionMs {
			t.Errorf("sample %d: client TTFT %v shorter than server TTFT %v", s.Seq, s.TTFTMs, lat.TTFTMs)
		}
	}
	if ev.Workload.Requests != 6 || ev.Command[0] != "kiln" || ev.Versions["go"] == "" {
		t.Errorf("evidence header incomplete: command %v versions %v workload %+v", ev.Command, ev.Versions, ev.Workload)
	}
}

// TestBenchArmsPrefillChunk compares two arms that differ only in
// --prefill-chunk under a workload mixing long and short prompts: the large
// chunk prefills a long prompt in one cycle and stalls the decoding
// requests, the small one spreads it over many cycles.
func TestBenchArmsPrefillChunk(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	bin := kilnBinary(t)
	out := filepath.Join(t.TempDir(), "evidence.json")
	var stdout, stderr bytes.Buffer
	err := runBench(context.Background(), []string{
		"--serve-bin", bin, "--serve-args", "--model kiln-tiny",
		"--arm", "chunk16:prefill-chunk=16", "--arm", "chunk2048:prefill-chunk=2048",
		"--requests", "8", "--concurrency", "4", "--max-tokens", "24",
		"--prompt-mix", "8,8,8," + strconv.Itoa(stallPromptWords), "--server-timing", "--out", out,
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("kiln bench: %v\n%s", err, stderr.String())
	}
	t.Logf("comparison:\n%s", stdout.String())
	ev := readEvidence(t, out)
	if len(ev.Arms) != 2 {
		t.Fatalf("arms = %d (errors %v), want 2", len(ev.Arms), ev.ArmErrors)
	}
	small, big := ev.Arms[0].Stats, ev.Arms[1].Stats
	if ev.Arms[0].Flag != "--prefill-chunk=16" || ev.Arms[1].Flag != "--prefill-chunk=2048" {
		t.Errorf("arm flags %q %q", ev.Arms[0].Flag, ev.Arms[1].Flag)
	}
	if small.Failed+big.Failed != 0 {
		t.Fatalf("failed requests: %d and %d", small.Failed, big.Failed)
	}
	if big.StallsByReason["actor_prefill"] == 0 {
		t.Errorf("the 2048-token chunk arm shows no actor_prefill stall: %v", big.StallsByReason)
	}
	if small.StallsByReason["actor_prefill"] >= big.StallsByReason["actor_prefill"] {
		t.Errorf("actor_prefill stalls: chunk 16 = %d, chunk 2048 = %d; want fewer with the small chunk",
			small.StallsByReason["actor_prefill"], big.StallsByReason["actor_prefill"])
	}
	// Same workload on both arms: the same prompts in the same order.
	for i := range ev.Arms[0].Samples {
		if a, b := ev.Arms[0].Samples[i].Prompt, ev.Arms[1].Samples[i].Prompt; a != b {
			t.Fatalf("sample %d used prompt %d on one arm and %d on the other", i, a, b)
		}
	}
}

// TestBenchConversationAgainstServe runs kiln bench's conversation
// workload against a kiln serve: every turn resends the history with the
// server's replies, so each turn's prompt holds the last one's, its reply
// and the new user message, and the evidence keeps the figures per turn.
func TestBenchConversationAgainstServe(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	srv := startServe(t)
	out := filepath.Join(t.TempDir(), "evidence.json")
	var stdout, stderr bytes.Buffer
	err := runBench(context.Background(), []string{
		"--url", srv.URL, "--requests", "2", "--concurrency", "2", "--turns", "3", "--max-tokens", "6",
		"--system-prompt-tokens", "20", "--prompt-tokens", "8", "--warmup", "1", "--out", out,
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("kiln bench: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "run, by turn") {
		t.Errorf("no turn table in the output:\n%s", stdout.String())
	}
	ev := readEvidence(t, out)
	arm := ev.Arms[0]
	if len(arm.Samples) != 6 || arm.Stats.Failed != 0 || arm.Warmup != 1 || len(arm.Stats.Turns) != 3 {
		t.Fatalf("samples %d failed %d warm-up %d turns %d; want 6, 0, 1, 3",
			len(arm.Samples), arm.Stats.Failed, arm.Warmup, len(arm.Stats.Turns))
	}
	for i, s := range arm.Samples {
		if s.PromptTokens == nil || s.Reply == "" {
			t.Fatalf("sample %d: prompt tokens %v reply %q, want both", i, s.PromptTokens, s.Reply)
		}
		if s.Turn == 1 {
			continue
		}
		prev := arm.Samples[i-1]
		// The history grows by the last reply and a new 8-word user
		// message (plus the template's markers).
		if grow := *s.PromptTokens - *prev.PromptTokens; grow < 8 {
			t.Errorf("conversation %d turn %d: %d prompt tokens after %d, want the history to grow", s.Conversation, s.Turn, *s.PromptTokens, *prev.PromptTokens)
		}
	}
	if len(arm.Config) == 0 {
		t.Error("evidence lacks the server's /v1/config")
	}
	if arm.PrefixCache == nil || arm.PrefixCache.Polls < 2 {
		t.Errorf("prefix cache watch %+v, want at least the readings before and after", arm.PrefixCache)
	}
}
