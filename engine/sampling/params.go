package sampling

import (
	"fmt"
	"math"
)

// Params selects how the next token is chosen from the logits. The zero
// value is greedy with no adjustment. The fields follow the OpenAI API (and,
// for the two parameters OpenAI lacks, the vLLM and llama.cpp servers);
// Validate holds every range.
type Params struct {
	Temperature float32 // in [0, MaxTemperature]; 0 means greedy (argmax)
	TopK        int     // 0 means no top-k cut
	TopP        float32 // the nucleus mass; 0 (unset) or 1 means no cut
	Seed        uint64  // used when HasSeed; otherwise a random seed
	HasSeed     bool

	// Logit adjustments (penalties.go), applied greedy or not.
	FrequencyPenalty  float32     // OpenAI's, over generated tokens; [-2, 2]
	PresencePenalty   float32     // OpenAI's, over generated tokens; [-2, 2]
	RepetitionPenalty float32     // over prompt and generated tokens; 0 (unset) or 1 is off
	MinP              float32     // drop tokens below MinP x the top probability; 0 is off
	LogitBias         []LogitBias // added to the logits of the given ids

	// HasTopP and HasRepetitionPenalty say the caller gave TopP and
	// RepetitionPenalty explicitly (a request's JSON did): zero is then a
	// value out of range, not "unset". A top_p that rounds to zero in
	// float32 would otherwise read as no cut, the opposite of what was asked.
	HasTopP              bool
	HasRepetitionPenalty bool
}

// LogitBias is one entry of a request's logit_bias: Bias is added to the
// logit of token ID before the token is chosen.
type LogitBias struct {
	ID   int
	Bias float32
}

// Ranges of the parameters, as OpenAI (temperature, penalties, bias) and
// vLLM (repetition) bound them.
const (
	MaxTemperature    = 2
	MaxPenalty        = 2   // |frequency_penalty|, |presence_penalty|
	MaxLogitBias      = 100 // |logit_bias value|
	MaxLogitBiasCount = 1024
	MaxRepetition     = 10 // repetition_penalty in (0, MaxRepetition]
)

// FieldError is a parameter out of range. Field is the parameter as the
// OpenAI API names it ("top_p", "logit_bias.5"); Message says what it must
// be and what it was, for a client to read.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Message }

func fieldError(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Validate reports the first parameter out of range as a *FieldError.
// vocab bounds the logit_bias ids; 0 leaves them unchecked against it (a
// request decoded before its model is known).
func (p Params) Validate(vocab int) error {
	if err := p.validateDraw(); err != nil {
		return err
	}
	if err := p.validateAdjustments(); err != nil {
		return err
	}
	return p.validateLogitBias(vocab)
}

// validateDraw checks the temperature and the cuts.
func (p Params) validateDraw() error {
	switch {
	case !(p.Temperature >= 0 && p.Temperature <= MaxTemperature):
		return fieldError("temperature", "'temperature' must be between 0 and %d, got %v", MaxTemperature, p.Temperature)
	case !(p.TopP >= 0 && p.TopP <= 1) || (p.HasTopP && p.TopP == 0):
		return fieldError("top_p", "'top_p' must be greater than 0 and at most 1 (at least %g), got %v", math.SmallestNonzeroFloat32, p.TopP)
	case p.TopK < 0 || p.TopK > math.MaxInt32:
		return fieldError("top_k", "'top_k' must be a non-negative integer, got %d", p.TopK)
	}
	return nil
}

// validateAdjustments checks the penalties and min_p.
func (p Params) validateAdjustments() error {
	ranged := []struct {
		key    string
		v      float32
		lo, hi float32
		loOpen bool
	}{
		{"frequency_penalty", p.FrequencyPenalty, -MaxPenalty, MaxPenalty, false},
		{"presence_penalty", p.PresencePenalty, -MaxPenalty, MaxPenalty, false},
		{"repetition_penalty", p.RepetitionPenalty, 0, MaxRepetition, true},
		{"min_p", p.MinP, 0, 1, false},
	}
	for _, f := range ranged {
		// An open lower bound is the unset zero unless the caller gave it.
		if !(f.v >= f.lo && f.v <= f.hi) || (f.loOpen && f.v == f.lo && p.HasRepetitionPenalty) {
			lb := "["
			if f.loOpen {
				lb = "("
			}
			return fieldError(f.key, "'%s' must be in %s%v, %v], got %v", f.key, lb, f.lo, f.hi, f.v)
		}
	}
	return nil
}

// validateLogitBias checks the number of entries, their ids against vocab
// (when known) and their values.
func (p Params) validateLogitBias(vocab int) error {
	if len(p.LogitBias) > MaxLogitBiasCount {
		return fieldError("logit_bias", "'logit_bias' may hold at most %d entries, got %d", MaxLogitBiasCount, len(p.LogitBias))
	}
	for _, b := range p.LogitBias {
		switch {
		case b.ID < 0:
			return fieldError("logit_bias", "'logit_bias' keys must be token ids (non-negative integers as strings), got %d", b.ID)
		case vocab > 0 && b.ID >= vocab:
			return fieldError("logit_bias", "'logit_bias' token %d is outside the model's vocabulary of %d tokens", b.ID, vocab)
		case !(b.Bias >= -MaxLogitBias && b.Bias <= MaxLogitBias):
			return fieldError(fmt.Sprintf("logit_bias.%d", b.ID), "'logit_bias' values must be in [-100, 100], got %v for token %d", b.Bias, b.ID)
		}
	}
	return nil
}

// penalized reports whether p adjusts logits at all.
func (p Params) penalized() bool {
	return p.FrequencyPenalty != 0 || p.PresencePenalty != 0 || p.repetition() ||
		p.MinP > 0 || len(p.LogitBias) > 0
}

func (p Params) repetition() bool { return p.RepetitionPenalty != 0 && p.RepetitionPenalty != 1 }
