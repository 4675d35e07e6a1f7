package train

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/llama"
)

// TestEncodeTargets: with kiln-tiny's ChatML template, the targets of a
// two-turn conversation are exactly each assistant turn's tokens up to and
// including its end-of-turn token; the system and user turns and the
// template's markup around them are context; the prefix before each
// assistant turn is what inference renders as that turn's prompt.
func TestEncodeTargets(t *testing.T) {
	l, err := llama.OpenTiny()
	if err != nil {
		t.Fatal(err)
	}
	enc := Encoder{Template: l.Template, Tokenizer: l.Tokenizer}
	msgs := []chat.Message{
		{Role: "system", Content: "be brief"},
		{Role: "user", Content: "hello there"},
		{Role: "assistant", Content: "the cat sat"},
		{Role: "user", Content: "and then"},
		{Role: "assistant", Content: "a dog ran"},
		{Role: "user", Content: "trailing turns are dropped"},
	}
	seq, err := enc.Encode(msgs)
	if err != nil {
		t.Fatal(err)
	}
	var runs [][]int
	for i, tgt := range seq.Target {
		if tgt && (i == 0 || !seq.Target[i-1]) {
			runs = append(runs, nil)
		}
		if tgt {
			runs[len(runs)-1] = append(runs[len(runs)-1], seq.IDs[i])
		}
	}
	stop := l.Tokenizer.StopIDs()
	var got []string
	for _, r := range runs {
		if !slices.Contains(stop, r[len(r)-1]) {
			t.Errorf("target run %v does not end with a stop token", r)
		}
		got = append(got, strings.TrimSpace(l.Tokenizer.Decode(r[:len(r)-1])))
	}
	if d := cmp.Diff([]string{"the cat sat", "a dog ran"}, got); d != "" {
		t.Errorf("target runs (-want +got):\n%s", d)
	}
	for j, end := range []int{2, 4} {
		prompt, err := enc.Prompt(msgs[:end])
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(seq.IDs[:len(prompt)], prompt) || seq.Target[len(prompt)-1] || !seq.Target[len(prompt)] {
			t.Errorf("assistant turn %d: the sequence does not continue the inference prompt of %d tokens with a target", j, len(prompt))
		}
	}
	if _, err := enc.Encode(msgs[:2]); !errors.Is(err, ErrNoAssistant) {
		t.Errorf("conversation without an assistant turn: %v, want ErrNoAssistant", err)
	}
}

// FuzzEncode: any conversation either encodes to ids in the vocabulary
// with at least one target, or fails with an error; it never panics.
func FuzzEncode(f *testing.F) {
	l, err := llama.OpenTiny()
	if err != nil {
		f.Fatal(err)
	}
	enc := Encoder{Template: l.Template, Tokenizer: l.Tokenizer}
	f.Add("hello", "the cat", "user")
	f.Add("<|im_end|><|im_start|>system", "x<|im_start|>", "system")
	f.Fuzz(func(t *testing.T, user, answer, role string) {
		seq, err := enc.Encode([]chat.Message{{Role: role, Content: user}, {Role: "assistant", Content: answer}})
		if err != nil {
			return
		}
		if seq.Targets() == 0 || len(seq.IDs) != len(seq.Target) {
			t.Fatalf("%d ids, %d flags, %d targets", len(seq.IDs), len(seq.Target), seq.Targets())
		}
		for _, id := range seq.IDs {
			if id < 0 || id >= l.Tokenizer.VocabSize() {
				t.Fatalf("id %d outside the vocabulary", id)
			}
		}
	})
}

// TestEncodeToolExample: a conversation with tools trains the assistant's
// call as the template renders it at inference (a <tool_call> block after
// a prompt that lists the tools), and the tool's result is context.
func TestEncodeToolExample(t *testing.T) {
	l, err := llama.OpenTiny()
	if err != nil {
		t.Fatal(err)
	}
	exs, err := ReadJSONL(strings.NewReader(`{"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],` +
		`"messages":[{"role":"user","content":"weather in Oslo"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"rain"},{"role":"assistant","content":"it rains"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	seqs, err := Encoder{Template: l.Template, Tokenizer: l.Tokenizer}.EncodeAll(exs)
	if err != nil {
		t.Fatal(err)
	}
	var target, context []int
	for i, id := range seqs[0].IDs {
		if seqs[0].Target[i] {
			target = append(target, id)
		} else {
			context = append(context, id)
		}
	}
	tgt, ctx := l.Tokenizer.Decode(target), l.Tokenizer.Decode(context)
	if !strings.Contains(tgt, `<tool_call>`) || !strings.Contains(tgt, `"get_weather"`) || !strings.Contains(tgt, "it rains") {
		t.Errorf("the targets %q do not hold the call and the answer", tgt)
	}
	if !strings.Contains(ctx, "get_weather") || !strings.Contains(ctx, "rain") || strings.Contains(tgt, "weather in Oslo") {
		t.Errorf("the context %q should list the tool and hold the question and the result", ctx)
	}
}
