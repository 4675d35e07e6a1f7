package server

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/kiln-ai/kiln/engine"
)

// penaltyParams are the logit adjustments a request may ask for; the
// engine applies them (engine/penalties.go). Zero values are "off".
type penaltyParams struct {
	FrequencyPenalty  float64
	PresencePenalty   float64
	RepetitionPenalty float64 // 0: absent
	MinP              float64
	LogitBias         []engine.LogitBias // sorted by id
}

// decodePenalties reads frequency_penalty, presence_penalty (OpenAI,
// [-2, 2]), repetition_penalty (vLLM and llama.cpp, (0, 10]), min_p ([0,
// 1]) and logit_bias (OpenAI: token id strings to biases in [-100, 100]).
// Token ids are checked against the vocabulary when the request is
// served (checkLogitBias).
func decodePenalties(fields map[string]json.RawMessage) (penaltyParams, error) {
	var p penaltyParams
	ranged := []struct {
		key    string
		dst    *float64
		lo, hi float64
		loOpen bool
	}{
		{"frequency_penalty", &p.FrequencyPenalty, -engine.MaxPenalty, engine.MaxPenalty, false},
		{"presence_penalty", &p.PresencePenalty, -engine.MaxPenalty, engine.MaxPenalty, false},
		{"repetition_penalty", &p.RepetitionPenalty, 0, engine.MaxRepetition, true},
		{"min_p", &p.MinP, 0, 1, false},
	}
	for _, f := range ranged {
		v, err := optionalNumber(fields, f.key)
		if err != nil {
			return p, err
		}
		if v == nil {
			continue
		}
		if *v < f.lo || *v > f.hi || (f.loOpen && *v == f.lo) {
			lb := "["
			if f.loOpen {
				lb = "("
			}
			return p, invalid(f.key, "invalid_value", "'%s' must be in %s%v, %v], got %v", f.key, lb, f.lo, f.hi, *v)
		}
		*f.dst = *v
	}
	var err error
	p.LogitBias, err = decodeLogitBias(fields["logit_bias"])
	return p, err
}

// decodeLogitBias reads OpenAI's logit_bias: an object whose keys are
// token ids (decimal strings) and whose values are numbers in [-100, 100].
func decodeLogitBias(raw json.RawMessage) ([]engine.LogitBias, error) {
	if isNull(raw) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, wrongType("logit_bias", "an object mapping token ids to numbers", raw)
	}
	if len(m) > engine.MaxLogitBiasCount {
		return nil, invalid("logit_bias", "invalid_value", "'logit_bias' may hold at most %d entries, got %d", engine.MaxLogitBiasCount, len(m))
	}
	out := make([]engine.LogitBias, 0, len(m))
	for k, v := range m {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil || id < 0 {
			return nil, invalid("logit_bias", "invalid_value", "'logit_bias' keys must be token ids (non-negative integers as strings), got %q", k)
		}
		var b float64
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, wrongType(fmt.Sprintf("logit_bias.%s", k), "a number", v)
		}
		if b < -engine.MaxLogitBias || b > engine.MaxLogitBias || math.IsNaN(b) {
			return nil, invalid(fmt.Sprintf("logit_bias.%s", k), "invalid_value", "'logit_bias' values must be in [-100, 100], got %v for token %d", b, id)
		}
		out = append(out, engine.LogitBias{ID: int(id), Bias: float32(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// checkLogitBias refuses a logit_bias id outside the model's vocabulary.
func checkLogitBias(bias []engine.LogitBias, vocab int) error {
	for _, b := range bias {
		if b.ID >= vocab {
			return invalid("logit_bias", "invalid_value", "'logit_bias' token %d is outside the model's vocabulary of %d tokens", b.ID, vocab)
		}
	}
	return nil
}

// apply copies the adjustments into the engine's sampling parameters.
func (p penaltyParams) apply(sm *engine.Sampling) {
	sm.FrequencyPenalty = float32(p.FrequencyPenalty)
	sm.PresencePenalty = float32(p.PresencePenalty)
	sm.RepetitionPenalty = float32(p.RepetitionPenalty)
	sm.MinP = float32(p.MinP)
	sm.LogitBias = p.LogitBias
}
