package chat

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The probe is the conversation Parse renders to prove a template works:
// a system message, a user turn, an assistant answer and a second user
// turn, with the generation prompt, as every chat request looks. Templates
// that refuse system messages (Gemma, early Mistral) call
// raise_exception on it; for them the probe is retried without the system
// message, as such a model is served.
const probeQuestion = "Probe question two?"

var (
	probeWithSystem = []Message{
		{Role: "system", Content: "Probe system message."},
		{Role: "user", Content: "Probe question one?"},
		{Role: "assistant", Content: "Probe answer one."},
		{Role: "user", Content: probeQuestion},
	}
	probeWithoutSystem = probeWithSystem[1:]
	probeOptions       = Options{
		BOS: "<s>", EOS: "</s>", AddGenerationPrompt: true,
		Now: time.Date(2025, time.February, 20, 12, 0, 0, 0, time.UTC),
	}
)

// probe renders the probe conversation: it must render, and the prompt
// must hold the last user message (a template that drops the question
// cannot serve a chat).
func (t *Template) probe() error {
	out, err := t.Render(probeWithSystem, probeOptions)
	if errors.Is(err, ErrRejected) {
		out, err = t.Render(probeWithoutSystem, probeOptions)
	}
	var rejected *RejectedError
	switch {
	case errors.As(err, &rejected):
		return fmt.Errorf("chat: template refuses a plain user/assistant/user conversation: raise_exception(%q): %w", rejected.Message, ErrTemplate)
	case err != nil:
		return fmt.Errorf("chat: template cannot render a system/user/assistant/user conversation: %w", err)
	case !strings.Contains(out, probeQuestion):
		return fmt.Errorf("chat: template leaves the user's message out of the prompt (rendered %q): %w", truncate(out, 200), ErrTemplate)
	}
	return nil
}

// truncate shortens s to at most n bytes for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
