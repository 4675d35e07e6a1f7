package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/sampling"
	"github.com/kiln-ai/kiln/engine/tokenizer"
	"github.com/kiln-ai/kiln/kernels"
)

// generateOptions are the flags of `kiln generate`.
type generateOptions struct {
	model       string
	prompt      string
	chat        bool
	promptIDs   string
	maxTokens   int
	temperature float64
	topK        int
	topP        float64
	seed        uint64
	hasSeed     bool
	json        bool
	threads     int
	topLogits   int
	context     int
	adapter     string
}

// generateOutput is the --json object.
type generateOutput struct {
	Model string `json:"model"`
	// Adapter is the sha256 of the applied adapter's weights file (absent
	// without --adapter).
	Adapter          string  `json:"adapter,omitempty"`
	PromptIDs        []int   `json:"prompt_ids"`
	IDs              []int   `json:"ids"`
	Text             *string `json:"text,omitempty"` // only with a tokenizer
	FinishReason     string  `json:"finish_reason"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TTFTMs           float64 `json:"ttft_ms"`
	TokensPerSec     float64 `json:"tokens_per_sec"` // decode rate after the first token
	// PromptTokensPerSec is the prefill rate: prompt tokens over the time
	// from admission to the prompt's last chunk (queueing and sampling
	// excluded), as llama-bench's pp figure counts.
	PromptTokensPerSec float64 `json:"prompt_tokens_per_sec"`
	// TopLogits (--top-logits K) holds the K largest raw logits after the
	// last prompt position as [id, logit] pairs, largest first.
	TopLogits [][2]float64 `json:"top_logits,omitempty"`
}

func parseGenerateFlags(args []string, help io.Writer) (generateOptions, error) {
	o := generateOptions{model: llama.TinyID, maxTokens: 256, temperature: 1, topP: 0.9}
	fs := flag.NewFlagSet("kiln generate", flag.ContinueOnError)
	fs.SetOutput(help) // help asked for goes there; a mistake is one line (parseFlags)
	fs.StringVar(&o.model, "model", o.model, `model: "kiln-tiny" (embedded), a .gguf file, a Hugging Face model directory or a llama2.c checkpoint`)
	fs.StringVar(&o.prompt, "prompt", "", "prompt text (needs a model with a tokenizer)")
	fs.BoolVar(&o.chat, "chat", false, "with --prompt: send the prompt as one user message rendered through the model's chat template (with the generation prompt), as the server's chat completions do; without it the text is the raw prompt")
	fs.StringVar(&o.promptIDs, "prompt-ids", "", "prompt as comma-separated token ids, used as given (no BOS added)")
	fs.IntVar(&o.maxTokens, "max-tokens", o.maxTokens, "tokens to generate at most")
	fs.Float64Var(&o.temperature, "temperature", o.temperature, "sampling temperature (0: greedy)")
	fs.IntVar(&o.topK, "top-k", 0, "sample among the k most likely tokens (0: all)")
	fs.Float64Var(&o.topP, "top-p", o.topP, "nucleus sampling mass (1: off)")
	fs.Func("seed", "random seed that makes sampling reproducible (default: random)", func(s string) error {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return err
		}
		o.seed, o.hasSeed = v, true
		return nil
	})
	fs.BoolVar(&o.json, "json", false, "print one JSON object (ids, text, timing) instead of streaming text")
	fs.IntVar(&o.threads, "threads", 0, "compute threads (0: one per CPU)")
	fs.IntVar(&o.context, "context", 0, "context length of a GGUF or Hugging Face model, capped at the model's own (0: 4096)")
	fs.StringVar(&o.adapter, "adapter", "", "LoRA adapter to apply: a PEFT directory (adapter_config.json, adapter_model.safetensors) or a llama.cpp LoRA GGUF file")
	fs.IntVar(&o.topLogits, "top-logits", 0, "with --json: add the K largest raw logits after the last prompt position as [id, logit] pairs")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: kiln generate [--model FILE_OR_DIR|kiln-tiny] (--prompt TEXT [--chat] | --prompt-ids 1,2,3) [--adapter DIR_OR_GGUF] [--max-tokens N] [--temperature T] [--seed S] [--json [--top-logits K]]\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("generate: unexpected argument %q", fs.Arg(0))
	case (o.prompt == "") == (o.promptIDs == ""):
		return o, errors.New("generate: give exactly one of --prompt and --prompt-ids")
	case o.chat && o.prompt == "":
		return o, errors.New("generate: --chat goes with --prompt")
	case o.maxTokens < 1:
		return o, fmt.Errorf("generate: --max-tokens %d must be at least 1", o.maxTokens)
	case o.topLogits < 0:
		return o, fmt.Errorf("generate: --top-logits %d must be at least 0", o.topLogits)
	case o.topLogits > 0 && !o.json:
		return o, errors.New("generate: --top-logits goes with --json")
	}
	return o, nil
}

// parseIDs parses "1,2,3".
func parseIDs(s string) ([]int, error) {
	var ids []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		id, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("generate: --prompt-ids: %w", err)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, errors.New("generate: --prompt-ids is empty")
	}
	return ids, nil
}

// generatePrompt is the prompt's token ids: --prompt-ids as given, or
// --prompt encoded (BOS first when the tokenizer asks for it), with --chat
// as one user message through the model's chat template exactly as the
// server encodes a chat request (chat.EncodePrompt).
func generatePrompt(o generateOptions, loaded *llama.Loaded) ([]int, error) {
	tok := loaded.Tokenizer
	switch {
	case o.promptIDs != "":
		return parseIDs(o.promptIDs)
	case o.chat && loaded.Template == nil:
		return nil, fmt.Errorf("generate: --chat: model %s carries no chat template (a GGUF's tokenizer.chat_template, a Hugging Face chat_template; a llama2.c checkpoint has none); drop --chat to send the prompt as raw text", loaded.ID)
	case tok == nil:
		return nil, fmt.Errorf("generate: model %s has no tokenizer (a llama2.c checkpoint); use --prompt-ids", loaded.ID)
	case o.chat:
		msgs := []chat.Message{{Role: "user", Content: o.prompt}}
		ids, err := loaded.Template.EncodePrompt(msgs, tok, chat.Options{AddGenerationPrompt: true})
		if err != nil {
			return nil, fmt.Errorf("generate: --chat: %w", err)
		}
		return ids, nil
	}
	return tok.WithBOS(tok.Encode(o.prompt)), nil
}

// request is the engine request of the options for prompt, stopping at
// tok's stop tokens (none without a tokenizer).
func (o generateOptions) request(prompt []int, tok *tokenizer.Tokenizer) engine.Request {
	var stopIDs []int
	if tok != nil {
		stopIDs = tok.StopIDs()
	}
	return engine.Request{
		Prompt:    prompt,
		MaxTokens: o.maxTokens,
		StopIDs:   stopIDs,
		Sampling: sampling.Params{
			Temperature: float32(o.temperature), TopK: o.topK, TopP: float32(o.topP),
			Seed: o.seed, HasSeed: o.hasSeed,
		},
	}
}

// runGenerate is `kiln generate`: one request through the engine, offline.
// Text streams to stdout as it is generated (token ids when the model has
// no tokenizer), a timing line goes to stderr; with --json, one object goes
// to stdout at the end.
func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseGenerateFlags(args, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	g, err := openGeneration(o, stderr)
	if err != nil {
		return err
	}
	defer g.close()
	prompt, err := generatePrompt(o, g.loaded)
	if err != nil {
		return err
	}
	out, text, err := g.run(ctx, o, prompt, stdout)
	if err != nil {
		return err
	}
	return reportGeneration(o, g.loaded.Tokenizer != nil, out, text, stdout, stderr)
}

// generation is the model (and adapter) one `kiln generate` runs.
type generation struct {
	loaded  *llama.Loaded
	adapter *llama.Adapter // nil: the base model
}

// openGeneration loads the model and, with --adapter, the adapter.
func openGeneration(o generateOptions, stderr io.Writer) (*generation, error) {
	loaded, err := openModel("generate", o.model, o.context, printWarning(stderr, "generate"))
	if err != nil {
		return nil, err
	}
	g := &generation{loaded: loaded}
	if o.adapter != "" {
		if g.adapter, err = llama.LoadAdapter(o.adapter, loaded.Model); err != nil {
			g.close()
			return nil, fmt.Errorf("generate: --adapter: %w", err)
		}
	}
	return g, nil
}

func (g *generation) close() { _ = g.loaded.Close() }

// run generates from prompt through an engine of its own, echoing text to
// stdout as it comes unless --json; it returns the output so far and the
// text.
func (g *generation) run(ctx context.Context, o generateOptions, prompt []int, stdout io.Writer) (generateOutput, string, error) {
	tok := g.loaded.Tokenizer
	out := generateOutput{Model: g.loaded.ID, PromptIDs: prompt, IDs: []int{}}
	if g.adapter != nil {
		out.Adapter = g.adapter.Info.SHA256
	}
	pool := kernels.NewPool(o.threads)
	defer pool.Close()
	state := g.loaded.Model.NewState(1, pool)
	state.SetAdapter(g.adapter)
	if o.topLogits > 0 {
		var err error
		if out.TopLogits, err = topLogits(state, prompt, o.topLogits); err != nil {
			return out, "", err
		}
	}
	eng, err := engine.New(state, engine.Config{})
	if err != nil {
		return out, "", fmt.Errorf("generate: %w", err)
	}
	if err := eng.Start(ctx); err != nil {
		return out, "", fmt.Errorf("generate: %w", err)
	}
	defer func() { _ = eng.Shutdown(context.Background()) }()
	stream, err := eng.Submit(ctx, o.request(prompt, tok))
	if err != nil {
		return out, "", fmt.Errorf("generate: %w", err)
	}
	var echo io.Writer
	if !o.json {
		echo = stdout
	}
	text, first, last := readTokens(stream, tok, &out, echo)
	res := stream.Result()
	if res.Finish == engine.FinishError || res.Finish == engine.FinishCancelled {
		if err := ctx.Err(); err != nil {
			return out, "", fmt.Errorf("generate: %w", err)
		}
		return out, "", fmt.Errorf("generate: %s: %w", res.Finish, res.Err)
	}
	out.timing(res, first, last)
	return out, text, nil
}

// reportGeneration writes, with --json, the output object (with its text
// when the model has a tokenizer) to stdout; otherwise it ends the echoed
// text's line and writes the timing line to stderr.
func reportGeneration(o generateOptions, hasText bool, out generateOutput, text string, stdout, stderr io.Writer) error {
	if o.json {
		if hasText {
			out.Text = &text
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stderr, "%d prompt tokens, %d generated (%s), ttft %.1f ms, %.1f tok/s\n",
		out.PromptTokens, out.CompletionTokens, out.FinishReason, out.TTFTMs, out.TokensPerSec)
	return nil
}

// readTokens collects the stream's ids into out and decodes its text (ids
// when the model has no tokenizer), echoing each piece to echo unless it is
// nil; first and last are the first and last tokens' Ready instants.
func readTokens(stream *engine.Stream, tok *tokenizer.Tokenizer, out *generateOutput, echo io.Writer) (string, time.Time, time.Time) {
	var text strings.Builder
	var dec interface {
		Next(int) string
		Flush() string
	}
	if tok != nil {
		dec = tok.NewDecoder()
	}
	var first, last time.Time
	for t := range stream.Tokens() {
		if first.IsZero() {
			first = t.Ready
		}
		last = t.Ready
		out.IDs = append(out.IDs, t.ID)
		piece := ""
		switch {
		case dec != nil && !tok.IsSpecial(t.ID):
			piece = dec.Next(t.ID)
		case dec == nil:
			piece = strconv.Itoa(t.ID) + " "
		}
		text.WriteString(piece)
		if echo != nil && piece != "" {
			fmt.Fprint(echo, piece)
		}
	}
	if dec != nil {
		rest := dec.Flush()
		text.WriteString(rest)
		if echo != nil {
			fmt.Fprint(echo, rest)
		}
	}
	return text.String(), first, last
}

// timing fills out's counts and rates from the request's result and its
// first and last tokens' Ready instants.
func (out *generateOutput) timing(res engine.Result, first, last time.Time) {
	out.FinishReason = string(res.Finish)
	out.PromptTokens = res.PromptTokens
	out.CompletionTokens = len(out.IDs)
	if !first.IsZero() {
		out.TTFTMs = float64(first.Sub(res.Submitted)) / float64(time.Millisecond)
	}
	if d := res.PrefillDone.Sub(res.AdmissionDone); !res.AdmissionDone.IsZero() && d > 0 {
		out.PromptTokensPerSec = float64(res.PromptTokens) / d.Seconds()
	}
	if n := len(out.IDs); n > 1 && last.After(first) {
		out.TokensPerSec = float64(n-1) / last.Sub(first).Seconds()
	}
}
