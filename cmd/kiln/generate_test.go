package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/internal/testshared"
)

// sharedModelPath is a file of ../shared/models beside the module root;
// the test skips when it is absent (fails where CI is set).
func sharedModelPath(t *testing.T, name string) string {
	t.Helper()
	return testshared.Require(t, "models", name)
}

func generateJSON(t *testing.T, args ...string) generateOutput {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := runGenerate(context.Background(), append(args, "--json", "--threads", "2"), &stdout, &stderr); err != nil {
		t.Fatalf("generate %v: %v (stderr %q)", args, err, stderr.String())
	}
	var out generateOutput
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("generate %v: output is not the JSON object: %v", args, err)
	}
	if dec.More() {
		t.Fatalf("generate %v: more than one JSON value on stdout", args)
	}
	return out
}

// TestGenerateGolden: `kiln generate --model stories260K.bin --prompt-ids P
// --max-tokens N --temperature 0 --json` reproduces every golden case.
func TestGenerateGolden(t *testing.T) {
	model := sharedModelPath(t, "stories260K.bin")
	raw, err := os.ReadFile(sharedModelPath(t, "stories260K.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []struct {
			Prompt    []int `json:"prompt"`
			Generated []int `json:"generated"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	for i, c := range golden.Cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ids := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c.Prompt)), ","), "[]")
			out := generateJSON(t, "--model", model, "--prompt-ids", ids, "--max-tokens", fmt.Sprint(len(c.Generated)), "--temperature", "0")
			if d := cmp.Diff(c.Generated, out.IDs); d != "" {
				t.Errorf("ids (-want +got):\n%s", d)
			}
			if out.Text != nil {
				t.Errorf("text %q for a model without a tokenizer", *out.Text)
			}
			if out.FinishReason != "length" || out.PromptTokens != len(c.Prompt) || out.CompletionTokens != len(c.Generated) {
				t.Errorf("finish %q, %d prompt, %d completion tokens", out.FinishReason, out.PromptTokens, out.CompletionTokens)
			}
		})
	}
}

// TestGenerateTinyText: the embedded model encodes a text prompt, streams
// text, and a seed makes the output reproducible.
func TestGenerateTinyText(t *testing.T) {
	args := []string{"--model", "kiln-tiny", "--prompt", "Once upon a time", "--max-tokens", "6", "--temperature", "0.8", "--seed", "7"}
	a, b := generateJSON(t, args...), generateJSON(t, args...)
	if d := cmp.Diff(a, b, cmpIgnoreTiming()); d != "" {
		t.Errorf("same seed, different output (-first +second):\n%s", d)
	}
	if a.Text == nil || strings.TrimSpace(*a.Text) == "" || len(a.IDs) == 0 || a.Model != "kiln-tiny" {
		t.Errorf("output %+v: want text and ids from kiln-tiny", a)
	}

	// The prefill rate covers the prompt's forward passes, which lie inside
	// the time to the first token.
	if a.PromptTokensPerSec <= 0 {
		t.Errorf("prompt_tokens_per_sec = %v, want a rate", a.PromptTokensPerSec)
	} else if prefillMs := float64(a.PromptTokens) / a.PromptTokensPerSec * 1000; prefillMs > a.TTFTMs {
		t.Errorf("prefill %.3f ms (%d tokens at %.0f tok/s) exceeds ttft %.3f ms", prefillMs, a.PromptTokens, a.PromptTokensPerSec, a.TTFTMs)
	}

	var stdout, stderr bytes.Buffer
	if err := runGenerate(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(stdout.String()); got != strings.TrimSpace(*a.Text) {
		t.Errorf("streamed text %q, JSON text %q", got, *a.Text)
	}
	if !strings.Contains(stderr.String(), "tok/s") {
		t.Errorf("no timing line on stderr: %q", stderr.String())
	}
}

func cmpIgnoreTiming() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool {
		n := p.Last().String()
		return n == ".TTFTMs" || n == ".TokensPerSec" || n == ".PromptTokensPerSec"
	}, cmp.Ignore())
}

func TestGenerateErrors(t *testing.T) {
	model := sharedModelPath(t, "stories260K.bin")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no prompt", []string{"--model", "kiln-tiny"}, "exactly one of --prompt and --prompt-ids"},
		{"both prompts", []string{"--prompt", "a", "--prompt-ids", "1"}, "exactly one of"},
		{"bad ids", []string{"--prompt-ids", "1,x"}, "--prompt-ids"},
		{"empty ids", []string{"--prompt-ids", ","}, "empty"},
		{"zero max tokens", []string{"--prompt-ids", "1", "--max-tokens", "0"}, "--max-tokens"},
		{"text without tokenizer", []string{"--model", model, "--prompt", "hello"}, "no tokenizer"},
		{"id outside vocabulary", []string{"--model", model, "--prompt-ids", "1,512"}, "invalid request"},
		{"missing model", []string{"--model", filepath.Join(t.TempDir(), "nope.bin"), "--prompt-ids", "1"}, "nope.bin does not exist"},
		{"stray argument", []string{"--prompt-ids", "1", "extra"}, "unexpected argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runGenerate(context.Background(), tc.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// FuzzParseIDs: whatever --prompt-ids holds, parsing either fails or gives
// ids that print back to a string that parses to the same ids.
func FuzzParseIDs(f *testing.F) {
	for _, s := range []string{"1,2,3", " 1 , 2 ", "1,,2", ",", "-5", "x", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := parseIDs(s)
		if err != nil {
			return
		}
		if len(ids) == 0 {
			t.Fatalf("parseIDs(%q) = no ids and no error", s)
		}
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = fmt.Sprint(id)
		}
		again, err := parseIDs(strings.Join(parts, ","))
		if err != nil || !cmp.Equal(ids, again) {
			t.Fatalf("round trip of %q: %v, %v (first %v)", s, again, err, ids)
		}
	})
}
