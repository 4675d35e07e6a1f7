package llama

import (
	"strings"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/tokenizer"
	"github.com/kiln-ai/kiln/kernels"
)

// TinyID is the id of the embedded default model.
const TinyID = "kiln-tiny"

// tinySeed fixes kiln-tiny's weights: "kiln" in ASCII.
const tinySeed = 0x6b696c6e

// TinyConfig is kiln-tiny's shape: stories15M's (dim 288, 6 layers of 6
// heads, hidden 768) over the English word vocabulary.
func TinyConfig() Config {
	return Config{
		Arch: "llama", Dim: 288, HiddenDim: 768, Layers: 6, Heads: 6, KVHeads: 6,
		Vocab:   tokenizer.English().VocabSize(),
		SeqLen:  2048,
		NormEps: DefaultNormEps, RopeTheta: DefaultRopeTheta,
	}
}

// OpenTiny builds kiln-tiny: an untrained Llama-architecture model whose
// weights come from a fixed seed, with the English word tokenizer and the
// ChatML template. It needs no file and gives the same model every time.
//
// The weights are random, but shaped so that samples read as words: channel
// 0 of the residual stream is a constant that no layer reads or writes, and
// the classifier turns it into a per-token bias that favours whole words
// (common function words a little more) and all but rules out byte pieces,
// stray symbols and the control tokens. What follows a prompt still depends
// on the prompt through the random layers.
func OpenTiny() (*Loaded, error) {
	tok := tokenizer.English()
	// Shaped before the weights are laid out for the kernels, which read
	// packed copies of them on some CPUs.
	m, err := newRandom(TinyConfig(), tinySeed, true, func(m *Model) { shapeTiny(m, tok) })
	if err != nil {
		return nil, err
	}
	return &Loaded{ID: TinyID, Model: m, Tokenizer: tok, Template: chat.ChatML(), Format: FormatEmbedded}, nil
}

// Logit biases of kiln-tiny's vocabulary classes, in nats.
const (
	biasCommon  = 5
	biasPunct   = 4
	biasWord    = 0
	biasSymbol  = -5
	biasControl = -40
)

// commonWords get biasCommon so that sampled text has English's rhythm.
var commonWords = strings.Fields(`the a an and of to in was is it he she they we you i his her
	their that with on for at as but not had have be one day said little big then so there`)

// tinyBiasScale converts a bias to the classifier weight of channel 0: the
// final RMSNorm scales the constant 1 of channel 0 to about sqrt(Dim /
// (1 + 0.02^2 * (Dim-1))), 15.5 for Dim 288.
const tinyBiasScale = 15.5

func shapeTiny(m *Model, tok *tokenizer.Tokenizer) {
	d := m.Config.Dim
	for v := range m.Config.Vocab {
		m.Embed.F32[v*d] = 1
	}
	zeroCol := func(w *kernels.Matrix) {
		for r := range w.Rows {
			w.F32[r*w.Cols] = 0
		}
	}
	for i := range m.Layers {
		l := &m.Layers[i]
		for _, w := range []*kernels.Matrix{&l.WQ, &l.WK, &l.WV, &l.W1, &l.W3} {
			zeroCol(w) // no layer reads channel 0
		}
		clear(l.WO.F32[:l.WO.Cols]) // nor writes it
		clear(l.W2.F32[:l.W2.Cols])
	}
	// A wider classifier spread than the 0.02 init makes the next word
	// depend visibly on the context.
	out := m.Output.F32
	for i := range out {
		out[i] *= 10
	}
	common := make(map[string]bool, len(commonWords))
	for _, w := range commonWords {
		common["▁"+w] = true
	}
	for v := range m.Config.Vocab {
		out[v*d] = tinyBias(tok, v, common) / tinyBiasScale
	}
}

func tinyBias(tok *tokenizer.Tokenizer, id int, common map[string]bool) float32 {
	if tok.Type(id) != tokenizer.TypeNormal {
		return biasControl // unknown, BOS, EOS, byte fallback
	}
	p := tok.Token(id)
	switch {
	case common[p]:
		return biasCommon
	case p == "." || p == ",":
		return biasPunct
	case isWordPiece(p):
		return biasWord
	}
	return biasSymbol
}

// isWordPiece reports "▁" followed by lowercase ASCII letters.
func isWordPiece(p string) bool {
	w, ok := strings.CutPrefix(p, "▁")
	if !ok || w == "" {
		return false
	}
	for _, c := range []byte(w) {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
