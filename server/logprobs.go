package server

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

// tokenLogprob is one emitted token's entry.
type tokenLogprob struct {
	id      int
	logprob float32
	top     []sampling.TokenLogprob
	offset  int // the byte offset of the token's text in the choice's (legacy text_offset)
}

// appendChatLogprobs appends a chunk's logprobs: null, or the object with
// the one token's entry.
func (c *choice) appendChatLogprobs(b []byte, lp *tokenLogprob) []byte {
	if lp == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"content":[`...)
	b = c.appendLogprobEntry(b, lp)
	return append(b, `],"refusal":null}`...)
}

// appendChatLogprobsList appends a whole choice's logprobs: null when not
// asked, else every text token's entry.
func (c *choice) appendChatLogprobsList(b []byte) []byte {
	if !c.req.Agent.Logprobs {
		return append(b, "null"...)
	}
	b = append(b, `{"content":[`...)
	for i := range c.logprobs {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendLogprobEntry(b, &c.logprobs[i])
	}
	return append(b, `],"refusal":null}`...)
}

// appendLogprobEntry appends {"token","logprob","bytes","top_logprobs"}.
func (c *choice) appendLogprobEntry(b []byte, lp *tokenLogprob) []byte {
	b = c.appendTokenFields(b, lp.id, lp.logprob)
	b = append(b, `,"top_logprobs":[`...)
	for i, t := range lp.top {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendTokenFields(b, t.ID, t.Logprob)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendTokenFields appends an unclosed {"token","logprob","bytes"}.
func (c *choice) appendTokenFields(b []byte, id int, logprob float32) []byte {
	piece := c.resp.vocab.Piece(id)
	b = append(b, `{"token":`...)
	b = appendJSONString(b, piece)
	b = append(b, `,"logprob":`...)
	b = appendLogprob(b, logprob)
	b = append(b, `,"bytes":[`...)
	for i := 0; i < len(piece); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(b, int64(piece[i]))
	}
	return append(b, ']')
}

// appendLogprob appends a log probability; -Inf (a token the model gave
// no probability) is written as OpenAI's floor, -9999.0, since JSON has
// no infinity.
func appendLogprob(b []byte, v float32) []byte {
	if math.IsInf(float64(v), -1) || v != v || v < -9999 {
		return append(b, "-9999.0"...)
	}
	return appendFloat32(b, v)
}

// appendLegacyLogprobs appends a text choice's logprobs: null when not
// asked, else the legacy object of parallel arrays (tokens,
// token_logprobs, top_logprobs as token-to-logprob maps, and each token's
// byte offset in the choice's text).
func (c *choice) appendLegacyLogprobs(b []byte, lps []tokenLogprob) []byte {
	if !c.req.Agent.Logprobs {
		return append(b, "null"...)
	}
	b = append(b, `{"tokens":[`...)
	for i, lp := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, c.resp.vocab.Piece(lp.id))
	}
	b = append(b, `],"token_logprobs":[`...)
	for i, lp := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendLogprob(b, lp.logprob)
	}
	b = append(b, `],"top_logprobs":`...)
	if c.req.Agent.TopLogprobs == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, lp := range lps {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			for j, t := range lp.top {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, c.resp.vocab.Piece(t.ID))
				b = append(b, ':')
				b = appendLogprob(b, t.Logprob)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"text_offset":[`...)
	for i, lp := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(b, int64(lp.offset))
	}
	return append(b, "]}"...)
}

// appendFloat32 appends v in the shortest form that reads back as the
// same float32.
func appendFloat32(b []byte, v float32) []byte {
	return strconv.AppendFloat(b, float64(v), 'g', -1, 32)
}
