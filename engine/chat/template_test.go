package chat

import (
	"github.com/kiln-ai/kiln/internal/testshared"

	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine/gguf"
)

func load(t testing.TB, name string) *Template {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Parse(string(src))
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return tmpl
}

var (
	// pirate has a system message and several turns.
	pirate = []Message{
		{Role: "system", Content: "You are a pirate."},
		{Role: "user", Content: "Hello!"},
		{Role: "assistant", Content: "Arr, ahoy."},
		{Role: "user", Content: "Where is the treasure?"},
	}
	// hi is a single user turn with whitespace that some templates trim.
	hi = []Message{{Role: "user", Content: "  Hi\n"}}
	// feb20 is the clock of the tests that render a date.
	feb20 = time.Date(2025, time.February, 20, 23, 59, 0, 0, time.UTC)
)

// The expected strings are what transformers' apply_chat_template produces
// for these sources (trim_blocks and lstrip_blocks on), worked out by hand
// from the templates.
func TestRenderRealTemplates(t *testing.T) {
	tests := []struct {
		name     string
		template string
		msgs     []Message
		opt      Options
		want     string
	}{
		{
			"tinyllama", "tinyllama.jinja", pirate, Options{BOS: "<s>", EOS: "</s>", AddGenerationPrompt: true},
			"<|system|>\nYou are a pirate.</s>\n<|user|>\nHello!</s>\n<|assistant|>\nArr, ahoy.</s>\n<|user|>\nWhere is the treasure?</s>\n<|assistant|>\n",
		},
		{
			"tinyllama without generation prompt", "tinyllama.jinja", hi, Options{BOS: "<s>", EOS: "</s>"},
			"<|user|>\n  Hi\n</s>\n",
		},
		{
			"smollm2", "smollm2.jinja", pirate, Options{EOS: "<|im_end|>", AddGenerationPrompt: true},
			"<|im_start|>system\nYou are a pirate.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nArr, ahoy.<|im_end|>\n<|im_start|>user\nWhere is the treasure?<|im_end|>\n<|im_start|>assistant\n",
		},
		{
			"smollm2 default system", "smollm2.jinja", hi, Options{AddGenerationPrompt: true},
			"<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\n  Hi\n<|im_end|>\n<|im_start|>assistant\n",
		},
		{
			"qwen2.5", "qwen2.5.jinja", pirate, Options{AddGenerationPrompt: true},
			"<|im_start|>system\nYou are a pirate.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nArr, ahoy.<|im_end|>\n<|im_start|>user\nWhere is the treasure?<|im_end|>\n<|im_start|>assistant\n",
		},
		{
			"qwen2.5 default system", "qwen2.5.jinja", hi, Options{},
			"<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\n  Hi\n<|im_end|>\n",
		},
		{
			"llama2", "llama2.jinja", pirate, Options{BOS: "<s>", EOS: "</s>", AddGenerationPrompt: true},
			"<s>[INST] <<SYS>>\nYou are a pirate.\n<</SYS>>\n\nHello! [/INST] Arr, ahoy. </s><s>[INST] Where is the treasure? [/INST]",
		},
		{
			"llama2 strips content", "llama2.jinja", hi, Options{BOS: "<s>", EOS: "</s>"},
			"<s>[INST] Hi [/INST]",
		},
		{
			"llama3", "llama3.jinja", pirate, Options{BOS: "<|begin_of_text|>", EOS: "<|eot_id|>", AddGenerationPrompt: true},
			"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a pirate.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nArr, ahoy.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWhere is the treasure?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
		},
		{
			"llama3 trims content", "llama3.jinja", hi, Options{BOS: "<|begin_of_text|>"},
			"<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
		},
		{
			"llama3.2 dates its system header", "llama3.2.jinja", pirate, Options{BOS: "<|begin_of_text|>", EOS: "<|eot_id|>", AddGenerationPrompt: true, Now: feb20},
			"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 20 Feb 2025\n\nYou are a pirate.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nArr, ahoy.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWhere is the treasure?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
		},
		{
			"llama3.2 without system message", "llama3.2.jinja", hi, Options{BOS: "<|begin_of_text|>", Now: feb20},
			"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 20 Feb 2025\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
		},
		{
			"llama3.2 date_string from kwargs", "llama3.2.jinja", hi, Options{BOS: "<|begin_of_text|>", Kwargs: map[string]any{"date_string": "01 Jan 2030"}},
			"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 01 Jan 2030\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := load(t, tt.template).Render(tt.msgs, tt.opt)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatML(t *testing.T) {
	tests := []struct {
		name string
		msgs []Message
		opt  Options
		want string
	}{
		{"conversation", pirate, Options{AddGenerationPrompt: true},
			"<|im_start|>system\nYou are a pirate.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nArr, ahoy.<|im_end|>\n<|im_start|>user\nWhere is the treasure?<|im_end|>\n<|im_start|>assistant\n"},
		{"keeps whitespace, no generation prompt", hi, Options{},
			"<|im_start|>user\n  Hi\n<|im_end|>\n"},
		{"no messages", nil, Options{AddGenerationPrompt: true}, "<|im_start|>assistant\n"},
		{"template syntax in content is text", []Message{{Role: "user", Content: "{{ 7*7 }} {% if x %}"}}, Options{},
			"<|im_start|>user\n{{ 7*7 }} {% if x %}<|im_end|>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ChatML().Render(tt.msgs, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if first, second := ChatML(), ChatML(); first != second {
		t.Error("ChatML compiles its template more than once")
	}
}

// The phi-3 vocabulary in ../shared carries the template of a real GGUF
// model; it must parse and render from the file.
func TestRenderFromGGUF(t *testing.T) {
	path := filepath.Join(sharedDir(t), "tokenizers", "gguf", "ggml-vocab-phi-3.gguf")
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	src, ok := f.String("tokenizer.chat_template")
	if !ok {
		t.Fatalf("%s has no tokenizer.chat_template", path)
	}
	tmpl, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render(pirate, Options{BOS: "<s>", EOS: "<|endoftext|>", AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	// Phi-3's template drops system messages and opens the assistant turn
	// after every user turn.
	want := "<s><|user|>\nHello!<|end|>\n<|assistant|>\nArr, ahoy.<|end|>\n<|user|>\nWhere is the treasure?<|end|>\n<|assistant|>\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		msgs     []Message
		want     error
		wantText string
	}{
		{"llama2 roles must alternate", "", []Message{{Role: "user", Content: "a"}, {Role: "user", Content: "b"}}, ErrRejected,
			"Conversation roles must alternate user/assistant/user/assistant/..."},
		{"raise_exception without message", "{{ raise_exception() }}", nil, ErrRejected, "raise_exception called"},
		{"range with step zero", "{{ range(1, 2, 0) }}", nil, ErrTemplate, ""},
		{"call of a non-function", "{{ bos_token() }}", nil, ErrTemplate, ""},
		{"unknown filter", "{{ bos_token | nosuchfilter }}", nil, ErrTemplate, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := load(t, "llama2.jinja")
			if tt.src != "" {
				var err error
				// compile: Parse would refuse these templates.
				if tmpl, err = compile(tt.src); err != nil {
					t.Fatal(err)
				}
			}
			got, err := tmpl.Render(tt.msgs, Options{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Render = %q, %v; want an error wrapping %v", got, err, tt.want)
			}
			if tt.want == ErrRejected {
				var re *RejectedError
				if !errors.As(err, &re) {
					t.Fatalf("error %v is not a *RejectedError", err)
				}
				if diff := cmp.Diff(tt.wantText, re.Message); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
				if errors.Is(err, ErrTemplate) {
					t.Errorf("a rejection must not read as a template defect: %v", err)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
	}{
		{"unclosed for", "{% for m in messages %}{{ m }}"},
		{"unclosed expression", "{{ messages"},
		{"unknown tag", "{% frobnicate %}"},
		{"stray endif", "{% endif %}"},
		{"bad operator", "{{ 1 + }}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Parse(tt.src)
			if !errors.Is(err, ErrTemplate) {
				t.Errorf("Parse(%q) = %v, %v; want an error wrapping ErrTemplate", tt.src, tmpl, err)
			}
		})
	}
}

func TestRenderConcurrent(t *testing.T) {
	tmpl := load(t, "llama3.jinja")
	want, err := tmpl.Render(pirate, Options{BOS: "<|begin_of_text|>"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			for range 50 {
				got, err := tmpl.Render(pirate, Options{BOS: "<|begin_of_text|>"})
				if err == nil && got != want {
					err = errors.New("output differs: " + got)
				}
				if err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("goroutine %d: %v", i, err)
		}
	}
}

// sharedDir is ../shared beside the module root, or skips.
func sharedDir(t testing.TB) string {
	t.Helper()
	return testshared.Require(t)
}
