package openai

import "github.com/kiln-ai/kiln/server/wire"

// Log probabilities in the OpenAI formats: chat's logprobs object of
// token entries (wire.Choice.AppendLogprobEntry), and a legacy completion's parallel
// arrays.

// appendChatLogprobs appends a chunk's logprobs: null, or the object with
// the one token's entry.
func appendChatLogprobs(b []byte, c *wire.Choice, lp *wire.TokenLogprob) []byte {
	if lp == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"content":[`...)
	b = c.AppendLogprobEntry(b, lp)
	return append(b, `],"refusal":null}`...)
}

// appendChatLogprobsList appends a whole choice's logprobs: null when not
// asked, else every text token's entry.
func appendChatLogprobsList(b []byte, c *wire.Choice) []byte {
	if !c.Req.Agent.Logprobs {
		return append(b, "null"...)
	}
	b = append(b, `{"content":[`...)
	for i := range c.Logprobs {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.AppendLogprobEntry(b, &c.Logprobs[i])
	}
	return append(b, `],"refusal":null}`...)
}

// appendLegacyLogprobs appends a text choice's logprobs: null when not
// asked, else the legacy object of parallel arrays (tokens,
// token_logprobs, top_logprobs as token-to-logprob maps, and each token's
// byte offset in the choice's text).
func appendLegacyLogprobs(b []byte, c *wire.Choice, lps []wire.TokenLogprob) []byte {
	if !c.Req.Agent.Logprobs {
		return append(b, "null"...)
	}
	b = append(b, `{"tokens":[`...)
	for i, lp := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendJSONString(b, c.Resp.Vocab.Piece(lp.ID))
	}
	b = append(b, `],"token_logprobs":[`...)
	for i, lp := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendLogprob(b, lp.Logprob)
	}
	b = append(b, `],"top_logprobs":`...)
	if c.Req.Agent.TopLogprobs == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, lp := range lps {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			for j, t := range lp.Top {
				if j > 0 {
					b = append(b, ',')
				}
				b = wire.AppendJSONString(b, c.Resp.Vocab.Piece(t.ID))
				b = append(b, ':')
				b = wire.AppendLogprob(b, t.Logprob)
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
		b = wire.AppendInt(b, int64(lp.Offset))
	}
	return append(b, "]}"...)
}
