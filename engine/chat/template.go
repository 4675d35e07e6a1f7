package chat

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ardanlabs/jinja"
)

// Message is one turn of a conversation.
type Message struct {
	Role, Content string
}

// Options are the values a template sees besides the messages.
type Options struct {
	// BOS and EOS are the tokenizer's begin- and end-of-sequence strings
	// (bos_token, eos_token).
	BOS, EOS string
	// AddGenerationPrompt ends the prompt with the opening of an
	// assistant turn (add_generation_prompt).
	AddGenerationPrompt bool
}

// ErrTemplate is wrapped by every error from Parse and Render that comes
// from the template itself: a syntax error, an undefined operation, or a
// failure inside the template engine. It is a defect of the model's
// template, not of the request.
var ErrTemplate = errors.New("chat template error")

// ErrRejected is wrapped when the template called raise_exception: it
// refuses the conversation (roles that do not alternate, a system message
// it does not support). It is a defect of the request; the error text is
// the template's message.
var ErrRejected = errors.New("chat template rejected the conversation")

// RejectedError carries the message a template passed to raise_exception.
type RejectedError struct {
	Message string
}

func (e *RejectedError) Error() string { return "chat template: " + e.Message }

// Unwrap makes a RejectedError match ErrRejected.
func (e *RejectedError) Unwrap() error { return ErrRejected }

// Template is a compiled chat template. It is immutable and safe for
// concurrent use.
type Template struct {
	src string
	t   *jinja.Template
}

// Parse compiles a Jinja chat template as stored in tokenizer.chat_template.
func Parse(src string) (t *Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("chat: parse: template engine panicked: %v: %w", r, ErrTemplate)
		}
	}()
	jt, err := jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("chat: parse: %w: %w", err, ErrTemplate)
	}
	return &Template{src: src, t: jt}, nil
}

// Source is the template's Jinja source.
func (t *Template) Source() string { return t.src }

// chatMLSource is the ChatML layout (Qwen, SmolLM2, OpenHermes, ...):
// <|im_start|>role\ncontent<|im_end|>\n per message, then
// <|im_start|>assistant\n when a generation prompt is asked for.
const chatMLSource = "{% for message in messages %}" +
	"{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
	"{% endfor %}" +
	"{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

var chatML = sync.OnceValue(func() *Template {
	t, err := Parse(chatMLSource)
	if err != nil {
		panic(err) // a constant that compiles in every test run
	}
	return t
})

// ChatML is the default template, for models that carry none.
func ChatML() *Template { return chatML() }

// Render formats msgs with the template. A template that calls
// raise_exception yields an error wrapping ErrRejected (a *RejectedError);
// any other failure wraps ErrTemplate. A panic inside the template engine is
// recovered and reported as an ErrTemplate error.
func (t *Template) Render(msgs []Message, opt Options) (out string, err error) {
	var raised *RejectedError
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("chat: render: template engine panicked: %v: %w", r, ErrTemplate)
		}
	}()
	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		d.AsDict().Set("role", jinja.NewString(m.Role))
		d.AsDict().Set("content", jinja.NewString(m.Content))
		list[i] = d
	}
	data := map[string]jinja.Value{
		"messages":              jinja.NewList(list),
		"bos_token":             jinja.NewString(opt.BOS),
		"eos_token":             jinja.NewString(opt.EOS),
		"add_generation_prompt": jinja.NewBool(opt.AddGenerationPrompt),
		// Shadows the engine's builtin so that a refusal can be told apart
		// from a broken template whatever the engine does with the error.
		"raise_exception": jinja.NewCallable("raise_exception", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			msg := "raise_exception called"
			switch {
			case len(args) > 0 && args[0].IsString():
				msg = args[0].AsString()
			case len(args) > 0:
				msg = args[0].String()
			}
			raised = &RejectedError{Message: msg}
			return jinja.Undefined(), raised
		}),
	}
	s, err := t.t.RenderValues(data)
	if raised != nil {
		return "", raised
	}
	if err != nil {
		return "", fmt.Errorf("chat: render: %w: %w", err, ErrTemplate)
	}
	return s, nil
}
