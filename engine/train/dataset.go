package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/kiln-ai/kiln/engine/chat"
)

// Message is one turn of a training conversation, as the HTTP API and the
// JSONL datasets spell it.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Example is one training conversation.
type Example struct {
	Messages []Message `json:"messages"`
}

// ErrEmptyExample means a conversation has no messages.
var ErrEmptyExample = errors.New("train: the conversation has no messages")

// Validate checks roles (system, user, assistant) and that there is an
// assistant turn to learn from.
func (e Example) Validate() error {
	if len(e.Messages) == 0 {
		return ErrEmptyExample
	}
	assistant := false
	for i, m := range e.Messages {
		switch m.Role {
		case "assistant":
			assistant = true
		case "system", "user":
		default:
			return fmt.Errorf("train: messages[%d].role %q is not system, user or assistant", i, m.Role)
		}
	}
	if !assistant {
		return ErrNoAssistant
	}
	return nil
}

// Chat converts the messages for the chat template.
func (e Example) Chat() []chat.Message {
	out := make([]chat.Message, len(e.Messages))
	for i, m := range e.Messages {
		out[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// MaxDatasetLine bounds one JSONL line (one conversation).
const MaxDatasetLine = 4 << 20

// ReadJSONL reads a dataset: one Example per line ({"messages": [...]}),
// blank lines skipped, unknown fields refused. Errors name the line.
func ReadJSONL(r io.Reader) ([]Example, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxDatasetLine)
	var out []Example
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var ex Example
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ex); err != nil {
			return nil, fmt.Errorf("train: dataset line %d: %w", line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("train: dataset line %d: more than one JSON value", line)
		}
		if err := ex.Validate(); err != nil {
			return nil, fmt.Errorf("train: dataset line %d: %w", line, err)
		}
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("train: read dataset: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("train: the dataset has no examples")
	}
	return out, nil
}
