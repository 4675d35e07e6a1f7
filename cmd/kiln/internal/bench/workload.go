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
	Stream       bool          `json:"stream"`
	ServerTiming bool          `json:"server_timing"` // send include_performance: true
	Temperature  float64       `json:"temperature"`
	Seed         uint64        `json:"seed"`
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
// generated from Seed so every run and every arm sends the same text.
func (w *Workload) Prompts(n int) ([][]Message, error) {
	if w.PromptsFile != "" {
		return readPromptsFile(w.PromptsFile)
	}
	rng := rand.New(rand.NewPCG(w.Seed, 0x6b696c6e))
	out := make([][]Message, n)
	for i := range out {
		length := w.PromptTokens
		if len(w.PromptMix) > 0 {
			length = w.PromptMix[i%len(w.PromptMix)]
		}
		var b strings.Builder
		for j := range length {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		out[i] = []Message{{Role: "user", Content: b.String()}}
	}
	return out, nil
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
