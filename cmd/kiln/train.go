package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/kernels"
)

// trainOptions are the flags of `kiln train`.
type trainOptions struct {
	model, data, out string
	threads, context int
	cfg              train.Config
}

func parseTrainFlags(args []string, help io.Writer) (trainOptions, error) {
	o := trainOptions{model: llama.TinyID, cfg: train.DefaultConfig()}
	fs := flag.NewFlagSet("kiln train", flag.ContinueOnError)
	fs.SetOutput(help) // help asked for goes there; a mistake is one line (parseFlags)
	fs.StringVar(&o.model, "model", o.model, `base model: "kiln-tiny" (embedded), a .gguf file or a Hugging Face model directory`)
	fs.StringVar(&o.data, "data", "", `training data: JSONL, one {"messages": [{"role", "content"}, ...]} per line`)
	fs.StringVar(&o.out, "out", "", "directory to write the adapter to (PEFT layout)")
	fs.IntVar(&o.cfg.Epochs, "epochs", o.cfg.Epochs, "passes over the data (one step per conversation)")
	fs.Float64Var(&o.cfg.LearningRate, "learning-rate", o.cfg.LearningRate, "constant learning rate")
	fs.IntVar(&o.cfg.LoraRank, "lora-rank", o.cfg.LoraRank, "LoRA rank r")
	fs.Float64Var(&o.cfg.LoraAlpha, "lora-alpha", o.cfg.LoraAlpha, "LoRA alpha (the update is scaled by alpha/r)")
	var targets string
	fs.StringVar(&targets, "target-modules", "", "comma-separated projections to adapt: q, k, v, o, gate, up, down, and on a hybrid (Qwen3.5) qkv, z, out (default: q,k,v,o, on a hybrid also qkv,z,out)")
	fs.StringVar(&o.cfg.Optimizer.Kind, "optimizer", o.cfg.Optimizer.Kind, "adam_w (beta1 0.9, beta2 0.999, eps 1e-8, no weight decay) or sgd")
	fs.Uint64Var(&o.cfg.Seed, "seed", 0, "seed of the LoRA initialisation")
	fs.IntVar(&o.threads, "threads", 0, "compute threads (0: one per CPU)")
	fs.IntVar(&o.context, "context", 0, "context length of a GGUF or Hugging Face model, capped at the model's own (0: 4096)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: kiln train [--model M] --data FILE.jsonl --out DIR [--epochs N] [--learning-rate LR] [--lora-rank R] [--lora-alpha A] [--target-modules q,k,v,o] [--optimizer adam_w|sgd] [--seed S]\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if targets != "" {
		o.cfg.TargetModules = strings.Split(targets, ",")
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("train: unexpected argument %q", fs.Arg(0))
	case o.data == "":
		return o, errors.New("train: --data is required")
	case o.out == "":
		return o, errors.New("train: --out is required")
	}
	if err := o.cfg.Validate(); err != nil {
		return o, flagFieldError(err)
	}
	return o, nil
}

// trainFlagOf is the flag that sets each train.Config field.
var trainFlagOf = map[string]string{
	"epochs": "--epochs", "learning_rate": "--learning-rate", "lora_rank": "--lora-rank",
	"lora_alpha": "--lora-alpha", "target_modules": "--target-modules", "optimizer.kind": "--optimizer",
}

// flagFieldError names the flag, not the JSON field, of a configuration
// field out of range.
func flagFieldError(err error) error {
	var fe *train.FieldError
	if errors.As(err, &fe) {
		if f, ok := trainFlagOf[fe.Field]; ok {
			return fmt.Errorf("train: %s: %s", f, fe.Msg)
		}
	}
	return err
}

// runTrain is `kiln train`: the server's SFT trainer, offline. A progress
// line per step (bar, step, epoch, loss, time per step) goes to stderr; the
// adapter is written to --out at the end.
func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseTrainFlags(args, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	f, err := os.Open(o.data)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	exs, err := train.ReadJSONL(f)
	_ = f.Close()
	if err != nil {
		return err
	}
	loaded, err := openModel("train", o.model, o.context, printWarning(stderr, "train"))
	if err != nil {
		return err
	}
	defer func() { _ = loaded.Close() }()
	if loaded.Tokenizer == nil || loaded.Template == nil {
		return fmt.Errorf("train: model %s has no tokenizer or chat template", loaded.ID)
	}
	seqs, err := train.Encoder{Template: loaded.Template, Tokenizer: loaded.Tokenizer}.EncodeAll(exs)
	if err != nil {
		return err
	}
	pool := kernels.NewPool(o.threads)
	defer pool.Close()
	tr, err := train.New(loaded.Model, pool, o.cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kiln train: %s, %d conversations, %d epochs, rank %d, %d trainable parameters\n",
		loaded.ID, len(seqs), o.cfg.Epochs, o.cfg.LoraRank, tr.Adapter().Params())
	start := time.Now()
	_, err = tr.Run(ctx, seqs, train.RunOptions{OnStep: func(p train.Progress) {
		fmt.Fprintln(stderr, progressLine(p, time.Since(start)))
	}})
	if err != nil {
		return err
	}
	if err := train.WritePEFT(o.out, tr.Adapter(), loaded.ID); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "adapter written to %s\n", o.out)
	return nil
}

// progressLine draws one step: a 20-cell bar, the step and epoch, the loss
// and the mean time per step so far.
func progressLine(p train.Progress, elapsed time.Duration) string {
	const cells = 20
	done := cells * p.Step / max(p.TotalSteps, 1)
	bar := strings.Repeat("#", done) + strings.Repeat(".", cells-done)
	per := elapsed / time.Duration(max(p.Step, 1))
	return fmt.Sprintf("[%s] step %d/%d epoch %d loss %.4f (%v/step)", bar, p.Step, p.TotalSteps, p.Epoch, p.Loss, per.Round(time.Millisecond))
}
