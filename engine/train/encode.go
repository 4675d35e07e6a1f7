package train

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/tokenizer"
)

// ErrNoAssistant means a conversation has no assistant turn: nothing to
// learn from.
var ErrNoAssistant = errors.New("train: the conversation has no assistant turn")

// ErrTemplatePrefix means the chat template does not render a conversation
// as the rendering of its first turns followed by the rest (it rewrites
// earlier turns), so the assistant tokens cannot be told apart.
var ErrTemplatePrefix = errors.New("train: the chat template does not render conversations prefix by prefix")

// Sequence is a tokenized conversation: its token ids and, for each, whether
// the assistant wrote it (the loss targets: what the model should have
// generated, up to and including the token that ends its turn).
type Sequence struct {
	IDs    []int
	Target []bool
}

// Targets is the number of target tokens.
func (s Sequence) Targets() int {
	n := 0
	for _, t := range s.Target {
		if t {
			n++
		}
	}
	return n
}

// Encoder renders conversations with a model's chat template and tokenizer
// exactly as inference renders a prompt.
type Encoder struct {
	Template  *chat.Template
	Tokenizer *tokenizer.Tokenizer
	// Tools are the tools the conversation offers (Example.ToolSpecs),
	// rendered as a chat request with them renders.
	Tools []chat.ToolSpec
}

// renderTime fixes strftime_now for every rendering of one encoding, so
// prefixes render identically.
var renderTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Encode tokenizes msgs for training as inference tokenizes a
// conversation: the whole rendering (through the last assistant turn) is
// tokenized at once, so every prefix that ends before an assistant turn is
// exactly the prompt inference would build from the turns before it, and
// each assistant turn's tokens (up to and including the first stop token)
// are the targets. Turns after the last assistant turn are dropped. When
// the tokenizer is not prefix-stable at a turn's boundaries, each piece is
// tokenized on its own instead (encodePieces).
func (e Encoder) Encode(msgs []chat.Message) (Sequence, error) {
	last := -1
	for i, m := range msgs {
		if m.Role == "assistant" {
			last = i
		}
	}
	if last < 0 {
		return Sequence{}, ErrNoAssistant
	}
	text, spans, err := e.render(msgs[:last+1], false)
	if err != nil {
		return Sequence{}, err
	}
	ids := e.tokens(text, spans)
	seq := Sequence{IDs: ids, Target: make([]bool, len(ids))}
	for j, m := range msgs[:last+1] {
		if m.Role != "assistant" {
			continue
		}
		start, ok, err := e.boundary(msgs[:j], true, text, ids)
		if err != nil {
			return Sequence{}, err
		}
		end, ok2, err := e.boundary(msgs[:j+1], false, text, ids)
		if err != nil {
			return Sequence{}, err
		}
		if !ok || !ok2 || end < start {
			return e.encodePieces(msgs[:last+1])
		}
		for i := start; i < end; i++ {
			seq.Target[i] = true
			if slices.Contains(e.Tokenizer.StopIDs(), ids[i]) {
				break
			}
		}
	}
	return seq, nil
}

// boundary is the number of leading ids of the whole conversation (text,
// ids) that the rendering of msgs (with the generation prompt when gen)
// tokenizes to; ok is false when that rendering is not a prefix of text or
// its tokens not a prefix of ids.
func (e Encoder) boundary(msgs []chat.Message, gen bool, text string, ids []int) (int, bool, error) {
	t, spans, err := e.render(msgs, gen)
	if err != nil {
		return 0, false, err
	}
	if !strings.HasPrefix(text, t) {
		return 0, false, nil
	}
	p := e.tokens(t, spans)
	return len(p), len(p) <= len(ids) && slices.Equal(ids[:len(p)], p), nil
}

// tokens tokenizes a whole rendering as inference does (chat.EncodeRendered:
// BOS first when the tokenizer asks for it).
func (e Encoder) tokens(text string, spans []chat.Span) []int {
	return chat.EncodeRendered(text, spans, e.Tokenizer)
}

// encodePieces tokenizes each turn's rendering on its own: the rendering up
// to an assistant turn (with the generation prompt) as context, the turn
// itself as targets up to the first stop token.
func (e Encoder) encodePieces(msgs []chat.Message) (Sequence, error) {
	var seq Sequence
	prev := ""
	add := func(ids []int, target bool) {
		stopped := false
		for _, id := range ids {
			seq.IDs = append(seq.IDs, id)
			seq.Target = append(seq.Target, target && !stopped)
			stopped = stopped || slices.Contains(e.Tokenizer.StopIDs(), id)
		}
	}
	for j, m := range msgs {
		if m.Role != "assistant" {
			continue
		}
		p, pspans, err := e.render(msgs[:j], true)
		if err != nil {
			return Sequence{}, err
		}
		ids, err := e.piece(p, pspans, prev)
		if err != nil {
			return Sequence{}, err
		}
		if prev == "" {
			ids = e.Tokenizer.WithBOS(ids)
		}
		add(ids, false)
		q, qspans, err := e.render(msgs[:j+1], false)
		if err != nil {
			return Sequence{}, err
		}
		if ids, err = e.piece(q, qspans, p); err != nil {
			return Sequence{}, err
		}
		add(ids, true)
		prev = q
	}
	return seq, nil
}

// Prompt tokenizes msgs with the generation prompt, as inference does for a
// chat request (chat.EncodePrompt: BOS first when the tokenizer asks for it).
func (e Encoder) Prompt(msgs []chat.Message) ([]int, error) {
	ids, err := e.Template.EncodePrompt(msgs, e.Tokenizer, chat.Options{AddGenerationPrompt: true, Now: renderTime, Tools: e.Tools})
	if err != nil {
		return nil, fmt.Errorf("train: render the conversation: %w", err)
	}
	return ids, nil
}

// render renders msgs and the spans of their contents (nil when the
// template transforms contents so that they cannot be located).
func (e Encoder) render(msgs []chat.Message, gen bool) (string, []chat.Span, error) {
	text, spans, err := e.Template.RenderPrompt(msgs, e.Tokenizer, chat.Options{AddGenerationPrompt: gen, Now: renderTime, Tools: e.Tools})
	if err != nil {
		return "", nil, fmt.Errorf("train: render the conversation: %w", err)
	}
	return text, spans, nil
}

// piece tokenizes the part of text after prefix, recognising special tokens
// only outside the message contents.
func (e Encoder) piece(text string, spans []chat.Span, prefix string) ([]int, error) {
	if !strings.HasPrefix(text, prefix) {
		return nil, ErrTemplatePrefix
	}
	off := len(prefix)
	var plain []tokenizer.Span
	for _, s := range spans {
		lo, hi := max(s.Start, off), s.End
		if hi > lo {
			plain = append(plain, tokenizer.Span{Start: lo - off, End: hi - off})
		}
	}
	return e.Tokenizer.EncodeTemplated(text[off:], plain), nil
}

// EncodeAll validates and encodes every example, naming the first that
// fails.
func (e Encoder) EncodeAll(exs []Example) ([]Sequence, error) {
	out := make([]Sequence, len(exs))
	for i, ex := range exs {
		if err := ex.Validate(); err != nil {
			return nil, fmt.Errorf("train: example %d: %w", i, err)
		}
		e.Tools = ex.ToolSpecs()
		s, err := e.Encode(ex.Chat())
		if err != nil {
			return nil, fmt.Errorf("train: example %d: %w", i, err)
		}
		out[i] = s
	}
	return out, nil
}
