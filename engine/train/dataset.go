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
	Content string `json:"content"` // null reads as "" (an assistant turn of only tool calls)
	// ToolCalls are an assistant turn's calls, in OpenAI's shape; a tool
	// turn answers ToolCallID.
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is a function call of an assistant turn, as OpenAI spells it:
// arguments is the text of a JSON object.
type ToolCall struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a function tool the conversation offers, as a chat request's
// tools field spells it: the template renders them as at inference, so a
// model trained on a call makes it when served the same tools.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// Example is one training conversation.
type Example struct {
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
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
		case "system", "user", "tool":
		default:
			return fmt.Errorf("train: messages[%d].role %q is not system, user, assistant or tool", i, m.Role)
		}
		if len(m.ToolCalls) > 0 && m.Role != "assistant" {
			return fmt.Errorf("train: messages[%d] has tool_calls but is not an assistant turn", i)
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
		out[i] = chat.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, chat.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		out[i].NullContent = len(m.ToolCalls) > 0 && m.Content == ""
	}
	return out
}

// ToolSpecs are the conversation's tools for the chat template.
func (e Example) ToolSpecs() []chat.ToolSpec {
	var out []chat.ToolSpec
	for _, t := range e.Tools {
		out = append(out, chat.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
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
