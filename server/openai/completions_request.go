package openai

import (
	"encoding/json"

	"github.com/kiln-ai/kiln/server/wire"
)

// A legacy completion's body (POST /v1/completions) decoded into the
// internal request: the prompt is raw text, and the options are chat's
// (chat_request.go) but for logprobs (an integer), echo, suffix and
// best_of.

// DefaultLegacyMaxTokens is OpenAI's default max_tokens for legacy
// completions (vLLM follows it); chat defaults to the rest of the context.
const DefaultLegacyMaxTokens = 16

// maxLegacyLogprobs is OpenAI's bound on a legacy completion's logprobs.
const maxLegacyLogprobs = 5

// ParseCompletion validates a legacy completion body.
func ParseCompletion(data []byte) (*wire.Request, error) {
	fields, err := wire.DecodeObject(data)
	if err != nil {
		return nil, err
	}
	req := &wire.Request{Legacy: true, API: wire.APICompletions}
	if req.Model, err = wire.RequiredString(fields, "model"); err != nil {
		return nil, err
	}
	if req.Prompt, err = decodePromptText(fields["prompt"]); err != nil {
		return nil, err
	}
	if err := decodeOptions(fields, req); err != nil {
		return nil, err
	}
	if _, given := fields["max_tokens"]; !given || wire.IsNull(fields["max_tokens"]) {
		req.MaxTokens = DefaultLegacyMaxTokens
	}
	if err := decodeLegacyAgent(fields, req); err != nil {
		return nil, err
	}
	return req, nil
}

// decodePromptText reads a legacy prompt: a string, or an array of exactly
// one string (several prompts would need n choices). Token-id prompts are
// refused: POST /tokenize gives ids, but a completion takes text.
func decodePromptText(raw json.RawMessage) (string, error) {
	if wire.IsNull(raw) {
		return "", wire.Invalid("prompt", "missing_required_parameter", "missing required parameter: 'prompt'")
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return "", wire.Invalid("prompt", "invalid_value", "'prompt' must not be empty")
		}
		return one, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return "", wire.WrongType("prompt", "a string or an array of one string", raw)
	}
	if len(items) != 1 {
		return "", wire.Invalid("prompt", "invalid_value", "'prompt' must hold exactly one string: this server completes one prompt per request, got %d", len(items))
	}
	if err := json.Unmarshal(items[0], &one); err != nil {
		return "", wire.WrongType("prompt[0]", "a string (token-id prompts are not supported)", items[0])
	}
	if one == "" {
		return "", wire.Invalid("prompt[0]", "invalid_value", "'prompt' must not be empty")
	}
	return one, nil
}

// rejectLegacyUnsupported refuses what a legacy completion may ask for
// that this server does not do (echo, suffix insertion, best_of other
// than n) and reads what it does: logprobs (an integer, the alternatives
// per token, at most maxLegacyLogprobs as OpenAI allows) and n.
func decodeLegacyAgent(fields map[string]json.RawMessage, req *wire.Request) error {
	unsupported := func(param, what string) error {
		return wire.Invalid(param, "unsupported_parameter", "'%s' is not supported: this server does not %s", param, what)
	}
	req.Agent = wire.AgentFields{N: 1, ToolChoice: wire.ToolChoiceNone, Parallel: true}
	if lp, err := wire.OptionalInt(fields, "logprobs"); err != nil {
		return err
	} else if lp != nil {
		if *lp < 0 || *lp > maxLegacyLogprobs {
			return wire.Invalid("logprobs", "invalid_value", "'logprobs' must be between 0 and %d, got %d", maxLegacyLogprobs, *lp)
		}
		req.Agent.Logprobs, req.Agent.TopLogprobs = true, int(*lp)
	}
	var err error
	if req.Agent.N, err = decodeN(fields); err != nil {
		return err
	}
	if echo, err := wire.OptionalBool(fields, "echo"); err != nil {
		return err
	} else if echo != nil && *echo {
		return unsupported("echo", "echo the prompt")
	}
	if suffix, err := wire.OptionalString(fields, "suffix"); err != nil {
		return err
	} else if suffix != nil && *suffix != "" {
		return unsupported("suffix", "insert text before a suffix")
	}
	if bo, err := wire.OptionalInt(fields, "best_of"); err != nil {
		return err
	} else if bo != nil && *bo != int64(req.Agent.N) {
		return wire.Invalid("best_of", "invalid_value", "'best_of' must equal 'n' (%d): this server returns every choice it generates, got %d", req.Agent.N, *bo)
	}
	return nil
}
