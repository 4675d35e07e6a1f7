package train

import (
	"errors"
	"fmt"
)

// FieldError is a configuration field out of range: Field is its JSON
// path inside the config object ("epochs", "optimizer.beta1"), Msg what is
// wrong with it, without the field's name or a package prefix.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return "train: " + e.Field + ": " + e.Msg }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// Config is the configuration of a supervised fine-tuning job
// (docs/maintenance.md section 8; JSON names as the HTTP API takes them).
type Config struct {
	Epochs        int             `json:"epochs"`
	LearningRate  float64         `json:"learning_rate"`
	LoraRank      int             `json:"lora_rank"`
	LoraAlpha     float64         `json:"lora_alpha"`
	TargetModules []string        `json:"target_modules"` // nil: the model's default (DefaultModulesFor)
	Optimizer     OptimizerConfig `json:"optimizer"`
	Seed          uint64          `json:"seed"`
}

// DefaultConfig is section 8's defaults: 3 epochs, learning rate 1e-4,
// rank 16, alpha 32, the model's default targets (q, k, v and o; on a
// hybrid the linear layers' qkv, z and out too), AdamW (0.9, 0.999, 1e-8,
// no weight decay), seed 0.
func DefaultConfig() Config {
	return Config{
		Epochs: 3, LearningRate: 1e-4, LoraRank: 16, LoraAlpha: 32,
		Optimizer: OptimizerConfig{Kind: AdamW}.withDefaults(),
	}
}

// Validate reports the first field out of range as a *FieldError.
func (c Config) Validate() error {
	switch {
	case c.Epochs < 1:
		return fieldErr("epochs", "%d must be at least 1", c.Epochs)
	case c.Epochs > 10000:
		return fieldErr("epochs", "%d exceeds 10000", c.Epochs)
	case !(c.LearningRate > 0) || c.LearningRate > 10:
		return fieldErr("learning_rate", "%g out of range (0, 10]", c.LearningRate)
	case c.LoraRank < 1 || c.LoraRank > 1024:
		return fieldErr("lora_rank", "%d out of range [1, 1024]", c.LoraRank)
	case !(c.LoraAlpha > 0) || c.LoraAlpha > 1e6:
		return fieldErr("lora_alpha", "%g out of range (0, 1e6]", c.LoraAlpha)
	}
	if c.TargetModules != nil {
		if _, err := ParseModules(c.TargetModules); err != nil {
			return err
		}
	}
	if err := c.Optimizer.Validate(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return fieldErr("optimizer."+fe.Field, "%s", fe.Msg)
		}
		return err
	}
	return nil
}
