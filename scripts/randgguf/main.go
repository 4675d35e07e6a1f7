package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// vocabSize is the TinyStories models' vocabulary (Llama 2's size).
const vocabSize = 32000

// shapes are the shapes randgguf writes: the TinyStories checkpoints'
// (Llama architecture, a 32,000-piece vocabulary) and Qwen2.5-0.5B's
// (qwen2: biases on Q, K and V, half-split RoPE with theta 1e6, 14 query
// and 2 key/value heads, a 151,936-piece vocabulary, tied embeddings). Only
// the shape is Qwen's: the vocabulary is Vocab's SentencePiece one, not
// Qwen's byte-level BPE, which changes what a word costs in tokens, not
// what a token costs in compute.
var shapes = map[string]llama.Config{
	"15M":  {Dim: 288, HiddenDim: 768, Layers: 6, Heads: 6, KVHeads: 6, SeqLen: 256},
	"110M": {Dim: 768, HiddenDim: 2048, Layers: 12, Heads: 12, KVHeads: 12, SeqLen: 1024},
	"qwen2.5-0.5b": {Arch: "qwen2", Dim: 896, HiddenDim: 4864, Layers: 24, Heads: 14, KVHeads: 2, SeqLen: 32768,
		Vocab: 151936, NormEps: 1e-6, RopeTheta: 1e6, Rope: llama.RopeNeoX, QKVBias: true},
}

// shapeNames lists the shapes for messages.
const shapeNames = "15M, 110M or qwen2.5-0.5b"

// types are the weight types WriteGGUF writes; others come from
// llama-quantize.
var types = map[string]kernels.DType{"f32": kernels.F32, "f16": kernels.F16, "q8_0": kernels.Q8_0}

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "randgguf:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("randgguf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shape := fs.String("shape", "15M", "model shape: "+shapeNames)
	typ := fs.String("type", "f32", "matrix type: f32, f16 or q8_0")
	seed := fs.Uint64("seed", 42, "weight seed")
	out := fs.String("out", "", "output .gguf file (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, ok := shapes[*shape]
	if !ok {
		return fmt.Errorf("--shape %q: want %s", *shape, shapeNames)
	}
	dt, ok := types[strings.ToLower(*typ)]
	if !ok {
		return fmt.Errorf("--type %q: want f32, f16 or q8_0", *typ)
	}
	if *out == "" {
		return errors.New("--out is required")
	}
	if c.Arch == "" {
		c.Arch, c.Vocab = "llama", vocabSize
		c.NormEps, c.RopeTheta = llama.DefaultNormEps, llama.DefaultRopeTheta
	}
	return write(*out, c, dt, *seed, "random "+name(*shape)+" "+strings.ToLower(*typ))
}

// write writes a random model of shape c with Vocab's vocabulary of
// c.Vocab pieces.
func write(path string, c llama.Config, dt kernels.DType, seed uint64, modelName string) error {
	v, err := Vocab(c.Vocab)
	if err != nil {
		return err
	}
	m, err := llama.NewRandom(c, seed, false)
	if err != nil {
		return fmt.Errorf("random model: %w", err)
	}
	return writeFile(path, m, dt, func(w *gguf.Writer) {
		w.SetString("general.name", modelName)
		setTokenizer(w, v)
	})
}

// name is the model name of a shape: stories15M, stories110M, or the shape
// itself.
func name(shape string) string {
	if shapes[shape].Arch == "" {
		return "stories" + shape
	}
	return shape
}

// setTokenizer adds v and the ChatML template as GGUF tokenizer metadata.
func setTokenizer(w *gguf.Writer, v *Vocabulary) {
	w.SetString("tokenizer.ggml.model", "llama")
	w.SetStrings("tokenizer.ggml.tokens", v.Pieces)
	w.SetFloat32s("tokenizer.ggml.scores", v.Scores)
	w.SetInt32s("tokenizer.ggml.token_type", v.Types)
	w.SetUint32("tokenizer.ggml.bos_token_id", uint32(v.BOS))
	w.SetUint32("tokenizer.ggml.eos_token_id", uint32(v.EOS))
	w.SetUint32("tokenizer.ggml.unknown_token_id", uint32(v.UNK))
	w.SetUint32("tokenizer.ggml.eot_token_id", uint32(v.EOT))
	w.SetBool("tokenizer.ggml.add_bos_token", true)
	w.SetString("tokenizer.chat_template", chat.ChatML().Source())
}

// writeFile writes m to path through a temporary file, so that an
// interrupted run leaves no truncated model behind.
func writeFile(path string, m *llama.Model, dt kernels.DType, extra func(*gguf.Writer)) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = llama.WriteGGUF(bw, m, dt, extra)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
