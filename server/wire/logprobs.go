package wire

import (
	"math"
	"strconv"

	"github.com/kiln-ai/kiln/engine/sampling"
)

// Log probabilities on the wire. They come from the model's distribution
// before any sampling control (sampling.Logprobs): temperature, top-k,
// top-p, penalties and a grammar's mask do not change them. Control tokens
// (the end-of-turn token that ends a choice) are not listed, as they are
// not part of the text.

// TokenLogprob is one emitted token's entry.
type TokenLogprob struct {
	ID      int
	Logprob float32
	Top     []sampling.TokenLogprob
	Offset  int // the byte offset of the token's text in the choice's (legacy text_offset)
}

// AppendLogprobEntry appends {"token","logprob","bytes","top_logprobs"}.
func (c *Choice) AppendLogprobEntry(b []byte, lp *TokenLogprob) []byte {
	b = c.appendTokenFields(b, lp.ID, lp.Logprob)
	b = append(b, `,"top_logprobs":[`...)
	for i, t := range lp.Top {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendTokenFields(b, t.ID, t.Logprob)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendTokenFields appends an unclosed {"token","logprob","bytes"}.
func (c *Choice) appendTokenFields(b []byte, id int, logprob float32) []byte {
	piece := c.Resp.Vocab.Piece(id)
	b = append(b, `{"token":`...)
	b = AppendJSONString(b, piece)
	b = append(b, `,"logprob":`...)
	b = AppendLogprob(b, logprob)
	b = append(b, `,"bytes":[`...)
	for i := 0; i < len(piece); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendInt(b, int64(piece[i]))
	}
	return append(b, ']')
}

// AppendLogprob appends a log probability; -Inf (a token the model gave
// no probability) is written as OpenAI's floor, -9999.0, since JSON has
// no infinity.
func AppendLogprob(b []byte, v float32) []byte {
	if math.IsInf(float64(v), -1) || v != v || v < -9999 {
		return append(b, "-9999.0"...)
	}
	return AppendFloat32(b, v)
}

// AppendFloat32 appends v in the shortest form that reads back as the
// same float32.
func AppendFloat32(b []byte, v float32) []byte {
	return strconv.AppendFloat(b, float64(v), 'g', -1, 32)
}
