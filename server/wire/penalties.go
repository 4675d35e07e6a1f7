package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/kiln-ai/kiln/engine/sampling"
)

// Penalties are the logit adjustments a request may ask for; the
// engine applies them (engine/sampling/penalties.go). Zero values are
// "off".
type Penalties struct {
	FrequencyPenalty  float64
	PresencePenalty   float64
	RepetitionPenalty float64 // 0: absent
	MinP              float64
	LogitBias         []sampling.LogitBias // sorted by id
}

// decodePenalties reads frequency_penalty, presence_penalty,
// repetition_penalty (vLLM and llama.cpp), min_p and logit_bias (OpenAI:
// token id strings to biases). Their ranges are sampling.Params.Validate's
// (ValidateSampling).
func decodePenalties(fields map[string]json.RawMessage) (Penalties, error) {
	var p Penalties
	keys := [...]string{"frequency_penalty", "presence_penalty", "repetition_penalty", "min_p"}
	dsts := [...]*float64{&p.FrequencyPenalty, &p.PresencePenalty, &p.RepetitionPenalty, &p.MinP}
	for i, key := range keys {
		v, err := OptionalNumber(fields, key)
		if err != nil {
			return p, err
		}
		if v != nil {
			*dsts[i] = *v
		}
	}
	var err error
	p.LogitBias, err = decodeLogitBias(fields["logit_bias"])
	return p, err
}

// decodeLogitBias reads OpenAI's logit_bias: an object whose keys are
// token ids (decimal strings) and whose values are numbers, in the ranges
// of sampling.Params.Validate.
func decodeLogitBias(raw json.RawMessage) ([]sampling.LogitBias, error) {
	if IsNull(raw) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, WrongType("logit_bias", "an object mapping token ids to numbers", raw)
	}
	out := make([]sampling.LogitBias, 0, len(m))
	for k, v := range m {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil || id < 0 {
			return nil, Invalid("logit_bias", "invalid_value", "'logit_bias' keys must be token ids (non-negative integers as strings), got %q", k)
		}
		var b float64
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, WrongType(fmt.Sprintf("logit_bias.%s", k), "a number", v)
		}
		out = append(out, sampling.LogitBias{ID: int(id), Bias: float32(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if err := rangeError(sampling.Params{LogitBias: out}.Validate(0)); err != nil {
		return nil, err
	}
	return out, nil
}

// apply copies the adjustments into the engine's sampling parameters.
func (p Penalties) apply(sm *sampling.Params) {
	sm.FrequencyPenalty = float32(p.FrequencyPenalty)
	sm.PresencePenalty = float32(p.PresencePenalty)
	sm.RepetitionPenalty = float32(p.RepetitionPenalty)
	sm.MinP = float32(p.MinP)
	sm.LogitBias = p.LogitBias
}

// SamplingParams are the engine's sampling parameters for req, with
// OpenAI's default temperature of 1.
func SamplingParams(req *Request) sampling.Params {
	sm := sampling.Params{Temperature: 1, TopK: req.TopK}
	if req.Temperature != nil {
		sm.Temperature = float32(*req.Temperature)
	}
	if req.TopP != nil {
		sm.TopP, sm.HasTopP = float32(*req.TopP), true
	}
	if req.Seed != nil {
		sm.Seed, sm.HasSeed = uint64(*req.Seed), true
	}
	req.Penalties.apply(&sm)
	return sm
}

// ValidateSampling checks req's sampling parameters against the ranges of
// sampling.Params.Validate, with the ids of logit_bias against vocab when
// it is known (> 0). fields, when the request is being decoded, tell which
// optional parameters were given, so that an explicit 0 where 0 means
// "unset" is refused.
func ValidateSampling(req *Request, fields map[string]json.RawMessage, vocab int) error {
	p := SamplingParams(req)
	p.HasRepetitionPenalty = !IsNull(fields["repetition_penalty"])
	return rangeError(p.Validate(vocab))
}

// rangeError is the OpenAI-shaped 400 for a sampling parameter out of
// range: the parameter, "invalid_value" and the sampling package's
// message.
func rangeError(err error) error {
	var fe *sampling.FieldError
	if errors.As(err, &fe) {
		return Invalid(fe.Field, "invalid_value", "%s", fe.Message)
	}
	return err
}
