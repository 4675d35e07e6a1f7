package chat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/internal/testshared"
)

// Parse refuses at load time what would fail at the first request.
func TestParseRefusesUnrenderableTemplates(t *testing.T) {
	tests := []struct {
		name, src, wantText string
	}{
		{"unknown filter", "{% for m in messages %}{{ m.content | nosuchfilter }}{% endfor %}", "unknown filter"},
		{"call of a non-function", "{{ bos_token() }}{% for m in messages %}{{ m.content }}{% endfor %}", "not callable"},
		{"always raises", "{{ raise_exception('no chat here') }}", `raise_exception("no chat here")`},
		{"drops the user's message", "{% for m in messages %}{{ m.role }}{% endfor %}", "leaves the user's message out"},
		{"renders nothing", "", "leaves the user's message out"},
		{"undefined attribute chain", "{% for m in messages %}{{ m.content.nope.deeper }}{% endfor %}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Parse(tt.src)
			if tt.name == "undefined attribute chain" && err == nil {
				// Jinja renders undefined as "", so the content is lost.
				t.Fatalf("Parse accepted a template that loses the content: %q", tmpl.Source())
			}
			if !errors.Is(err, ErrTemplate) || errors.Is(err, ErrRejected) {
				t.Fatalf("Parse = %v; want an ErrTemplate error (a defect of the model, not of a request)", err)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not say %q", err, tt.wantText)
			}
		})
	}
}

// A template that refuses system messages (Gemma's layout) is served: the
// probe retries without the system message. Its refusal still reaches the
// request that sends one.
func TestParseAcceptsTemplateWithoutSystemRole(t *testing.T) {
	src := "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}" +
		"<start_of_turn>{{ m.role }}\n{{ m.content }}<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
	tmpl, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Render(pirate, Options{}); !errors.Is(err, ErrRejected) {
		t.Errorf("Render with a system message = %v, want ErrRejected", err)
	}
}

// Every real template in testdata passes the load-time check.
func TestParseAcceptsRealTemplates(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("testdata", "*.jinja"))
	if err != nil || len(names) < 6 {
		t.Fatalf("testdata templates: %v, %v", names, err)
	}
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Parse(string(src)); err != nil {
				t.Error(err)
			}
		})
	}
}

// qwen3Template is the chat template of the real Qwen3 tokenizer_config.json
// in ../shared.
func qwen3Template(t *testing.T) *Template {
	t.Helper()
	data, err := os.ReadFile(testshared.Require(t, "tokenizers", "qwen3", "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ChatTemplate string `json:"chat_template"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	tmpl, err := Parse(cfg.ChatTemplate)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// The expected strings follow the Qwen3 template by hand: the assistant
// turn after the last user message carries its reasoning in a think block;
// enable_thinking=false closes an empty one after the generation prompt.
func TestRenderQwen3(t *testing.T) {
	tmpl := qwen3Template(t)
	noThink := map[string]any{"enable_thinking": false}
	tests := []struct {
		name string
		msgs []Message
		opt  Options
		want string
	}{
		{"conversation", pirate, Options{AddGenerationPrompt: true},
			"<|im_start|>system\nYou are a pirate.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\nArr, ahoy.<|im_end|>\n<|im_start|>user\nWhere is the treasure?<|im_end|>\n<|im_start|>assistant\n"},
		{"thinking off", hi, Options{AddGenerationPrompt: true, Kwargs: noThink},
			"<|im_start|>user\n  Hi\n<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"},
		{"thinking on is the default", hi, Options{AddGenerationPrompt: true, Kwargs: map[string]any{"enable_thinking": true}},
			"<|im_start|>user\n  Hi\n<|im_end|>\n<|im_start|>assistant\n"},
		{"reasoning split from the last answer", []Message{{Role: "user", Content: "Q"}, {Role: "assistant", Content: "<think>\nhmm\n</think>\n\nA"}}, Options{},
			"<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nhmm\n</think>\n\nA<|im_end|>\n"},
		{"reasoning dropped from earlier answers", []Message{{Role: "user", Content: "Q"}, {Role: "assistant", Content: "<think>\nhmm\n</think>\n\nA"}, {Role: "user", Content: "Q2"}}, Options{},
			"<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n<|im_start|>user\nQ2<|im_end|>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tmpl.Render(tt.msgs, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Kwargs add variables but cannot replace the ones Render defines.
func TestKwargsCannotReplaceVariables(t *testing.T) {
	tmpl, err := Parse("{{ bos_token }}|{{ tools is none }}|{{ extra }}|{% for m in messages %}{{ m.content }}{% endfor %}")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render([]Message{{Role: "user", Content: "hi"}}, Options{BOS: "<s>", Kwargs: map[string]any{
		"bos_token": "X", "tools": "X", "messages": []any{}, "extra": 7,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<s>|True|7|hi"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

func TestStrftime(t *testing.T) {
	morning := time.Date(2025, time.February, 3, 9, 5, 7, 0, time.UTC)
	tests := []struct {
		format string
		t      time.Time
		want   string
	}{
		{"%d %b %Y", feb20, "20 Feb 2025"},
		{"%d %b %Y", morning, "03 Feb 2025"},
		{"%-d %B %Y", morning, "3 February 2025"},
		{"%A %a %j %y %m", morning, "Monday Mon 034 25 02"},
		{"%H:%M:%S %I %p", feb20, "23:59:00 11 PM"},
		{"%I%p %e", morning, "09AM  3"},
		{"%Y-%m-%d %Z %z", morning, "2025-02-03 UTC +0000"},
		{"100%% %q %", morning, "100% %q %"},
	}
	for _, tt := range tests {
		if got := strftime(tt.format, tt.t); got != tt.want {
			t.Errorf("strftime(%q) = %q, want %q", tt.format, got, tt.want)
		}
	}
}
