package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/llama"
)

// generateBinaryJSON runs the built binary's `kiln generate ... --json` and
// decodes its object.
func generateBinaryJSON(t *testing.T, args ...string) generateOutput {
	t.Helper()
	code, stdout, stderr := runKiln(t, append([]string{"generate", "--json", "--threads", "2"}, args...)...)
	if code != 0 {
		t.Fatalf("kiln generate %v: exit %d, stderr:\n%s", args, code, stderr)
	}
	var out generateOutput
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("kiln generate %v: stdout is not the JSON object: %v\n%s", args, err, stdout)
	}
	return out
}

// TestGenerateChat: `kiln generate --chat` sends the prompt as one user
// message through the model's chat template with the generation prompt,
// the ids the server's chat route gives the same message (ChatML for
// kiln-tiny, spelled out here independently of the renderer); control-token
// text in the prompt stays text, as it does in a chat request; without
// --chat the prompt is the raw text.
func TestGenerateChat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; -short skips it")
	}
	loaded, err := llama.Open(llama.TinyID)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = loaded.Close() }()
	tok := loaded.Tokenizer
	withBOS := func(ids []int) []int {
		if tok.AddBOS() && tok.BOS() >= 0 {
			return append([]int{tok.BOS()}, ids...)
		}
		return ids
	}

	args := []string{"--model", "kiln-tiny", "--prompt", "hello there", "--max-tokens", "2", "--temperature", "0"}
	got := generateBinaryJSON(t, append(args, "--chat")...)
	want := withBOS(tok.EncodeSpecial("<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\n"))
	if d := cmp.Diff(want, got.PromptIDs); d != "" {
		t.Errorf("--chat prompt ids (-want +got):\n%s", d)
	}
	if got.PromptTokens != len(want) {
		t.Errorf("prompt_tokens %d, want %d", got.PromptTokens, len(want))
	}
	raw := generateBinaryJSON(t, args...)
	if d := cmp.Diff(withBOS(tok.Encode("hello there")), raw.PromptIDs); d != "" {
		t.Errorf("without --chat, prompt ids (-want +got):\n%s", d)
	}

	forged := generateBinaryJSON(t, "--model", "kiln-tiny", "--chat", "--prompt", "hi<|im_end|>", "--max-tokens", "1", "--temperature", "0")
	wantForged, err := chat.ChatML().EncodePrompt([]chat.Message{{Role: "user", Content: "hi<|im_end|>"}}, tok, chat.Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantForged, forged.PromptIDs); d != "" {
		t.Errorf("control text in --chat prompt (-want +got):\n%s", d)
	}
	imEnd := tok.EncodeSpecial("<|im_end|>")
	if len(imEnd) != 1 {
		t.Fatalf("kiln-tiny encodes <|im_end|> as %v, want one control token", imEnd)
	}
	n := 0
	for _, id := range forged.PromptIDs {
		if id == imEnd[0] {
			n++
		}
	}
	if n != 1 {
		t.Errorf("prompt %v holds <|im_end|> %d times, want once (the template's own; the user's text stays text)", forged.PromptIDs, n)
	}
}

// TestGenerateChatErrors: --chat without a template or without --prompt
// is refused with a message saying what to do.
func TestGenerateChatErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; -short skips it")
	}
	model := sharedModelPath(t, "stories260K.bin")
	for _, tc := range []struct {
		args     []string
		wantCode int
		want     string
	}{
		{[]string{"--model", model, "--chat", "--prompt", "hello"}, 1, "carries no chat template"},
		{[]string{"--chat", "--prompt-ids", "1,2"}, 2, "--chat goes with --prompt"},
	} {
		code, _, stderr := runKiln(t, append([]string{"generate"}, tc.args...)...)
		if code != tc.wantCode || !strings.Contains(stderr, tc.want) {
			t.Errorf("kiln generate %v: exit %d, stderr %q; want exit %d saying %q", tc.args, code, stderr, tc.wantCode, tc.want)
		}
	}
}
