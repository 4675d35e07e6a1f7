package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"
)

// Message is one chat message of a prompt.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Workload says what to send and how much. It is the part of a run that must
// be identical across comparison arms.
type Workload struct {
	Model        string        `json:"model"`
	Concurrency  int           `json:"concurrency"`
	Requests     int           `json:"requests"`      // stop after this many (0 = use Duration)
	Duration     time.Duration `json:"duration_ns"`   // stop starting new requests after this (0 = use Requests)
	MaxTokens    int           `json:"max_tokens"`    // per request
	PromptTokens int           `json:"prompt_tokens"` // synthetic prompt length in words (≈ tokens)
	PromptMix    []int         `json:"prompt_mix,omitempty"`
	PromptsFile  string        `json:"prompts_file,omitempty"` // JSONL: {"messages":[...]} per line
	// SystemPromptTokens puts one system prompt of this many words before
	// every synthetic prompt, the same text for all of them: the shared
	// prefix of many users behind one system prompt.
	SystemPromptTokens int `json:"system_prompt_tokens,omitempty"`
	// Turns makes every request a conversation of this many user
	// messages (0 or 1: one message). Each turn resends the whole history,
	// the server's own earlier replies included, as a chat client does;
	// Requests then counts conversations.
	Turns        int     `json:"turns,omitempty"`
	Stream       bool    `json:"stream"`
	ServerTiming bool    `json:"server_timing"` // send include_performance: true
	Temperature  float64 `json:"temperature"`
	Seed         uint64  `json:"seed"`
}

// Validate reports the first offending field by its flag name.
func (w *Workload) Validate() error {
	switch {
	case w.Concurrency < 1:
		return errors.New("--concurrency must be at least 1")
	case w.Requests < 0 || w.Duration < 0:
		return errors.New("--requests and --duration must not be negative")
	case w.Requests == 0 && w.Duration == 0:
		return errors.New("one of --requests or --duration is required")
	case w.MaxTokens < 1:
		return errors.New("--max-tokens must be at least 1")
	case w.PromptsFile == "" && w.PromptTokens < 1 && len(w.PromptMix) == 0:
		return errors.New("--prompt-tokens must be at least 1 (or give --prompts)")
	case w.Temperature < 0 || w.Temperature > 2:
		return errors.New("--temperature must be in [0, 2]")
	case w.SystemPromptTokens < 0:
		return errors.New("--system-prompt-tokens must not be negative")
	case w.Turns < 0:
		return errors.New("--turns must not be negative")
	case w.PromptsFile != "" && (w.SystemPromptTokens > 0 || w.Turns > 1):
		return errors.New("--system-prompt-tokens and --turns build synthetic prompts; they do not apply to --prompts")
	}
	for _, n := range w.PromptMix {
		if n < 1 {
			return errors.New("--prompt-mix lengths must be at least 1")
		}
	}
	return nil
}

// words is the synthetic prompt vocabulary: common English words, so that a
// word is about one token in most vocabularies.
var words = strings.Fields(`the of and to in is was that for it with as his on be at by
had are but from or have an they which one you were her all she there would their we
him been has when who will more no if out so said what up its about into than them can
only other new some could time these two may then do first any my now such like our over
man me even most made after also did many before must through back years where much your
way well down should because each just those people how too little state good very make
world still own see men work long get here between both life being under never day same
another know while last might us great old year off come since against go came right used
take three`)

// Prompts builds the workload's prompts: read from PromptsFile, or synthetic
// ones of PromptTokens words (cycling through PromptMix lengths when given),
// generated from Seed so every run and every arm sends the same text. With
// SystemPromptTokens every synthetic prompt starts with the same system
// message; with Turns > 1 a prompt holds one user message per turn, which
// the runner sends one turn at a time (Conversation).
func (w *Workload) Prompts(n int) ([][]Message, error) {
	if w.PromptsFile != "" {
		return readPromptsFile(w.PromptsFile)
	}
	rng := rand.New(rand.NewPCG(w.Seed, 0x6b696c6e))
	var system []Message
	if w.SystemPromptTokens > 0 {
		// Its own stream, so that the user messages are those of the
		// same seed without a system prompt.
		sys := rand.New(rand.NewPCG(w.Seed, 0x73797374))
		system = []Message{{Role: "system", Content: randomWords(sys, w.SystemPromptTokens)}}
	}
	out := make([][]Message, n)
	for i := range out {
		length := w.PromptTokens
		if len(w.PromptMix) > 0 {
			length = w.PromptMix[i%len(w.PromptMix)]
		}
		msgs := append([]Message(nil), system...)
		for range max(w.Turns, 1) {
			msgs = append(msgs, Message{Role: "user", Content: randomWords(rng, length)})
		}
		out[i] = msgs
	}
	return out, nil
}

// randomWords is n words drawn from words.
func randomWords(rng *rand.Rand, n int) string {
	var b strings.Builder
	for j := range n {
		if j > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// Conversation is the messages of a conversation's turn (1-based): the
// prompt's messages before its first user message (a system prompt), then
// for each earlier turn its user message and the reply the server gave,
// then this turn's user message. replies holds the earlier turns' replies.
func Conversation(prompt []Message, turn int, replies []string) []Message {
	var out []Message
	user := 0
	for _, m := range prompt {
		if m.Role != "user" {
			out = append(out, m)
			continue
		}
		user++
		out = append(out, m)
		if user == turn {
			break
		}
		out = append(out, Message{Role: "assistant", Content: replies[user-1]})
	}
	return out
}

func readPromptsFile(path string) ([][]Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("prompts file: %w", err)
	}
	defer f.Close()
	var out [][]Message
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var rec struct {
			Messages []Message `json:"messages"`
		}
		if err := json.Unmarshal([]byte(text), &rec); err != nil {
			return nil, fmt.Errorf("prompts file %s line %d: %w", path, line, err)
		}
		if len(rec.Messages) == 0 {
			return nil, fmt.Errorf("prompts file %s line %d: no messages", path, line)
		}
		out = append(out, rec.Messages)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("prompts file %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("prompts file %s: no prompts", path)
	}
	return out, nil
}
