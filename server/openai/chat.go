package openai

import (
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/server/wire"
)

// The OpenAI wire format of a chat completion: the chat.completion.chunk
// records of a stream, its terminal and usage chunks, and the whole
// chat.completion of a non-streaming response.

// appendPieceChunk appends a token's chat chunk whose delta is pc: the
// content alone, or with tools the parser's pieces (toolcalls.go); role
// adds the assistant's role, which the choice's first chunk carries.
func appendPieceChunk(b []byte, c *wire.Choice, role bool, pc *wire.Piece, lp *wire.TokenLogprob) []byte {
	b = appendChunkHead(b, c)
	b = appendChoiceIndex(b, c, `"choices":[{"index":`)
	b = append(b, `,"delta":`...)
	b = appendDelta(b, role, pc)
	b = append(b, `,"logprobs":`...)
	b = appendChatLogprobs(b, c, lp)
	b = append(b, `,"finish_reason":null}]`...)
	return appendChunkTail(b, c)
}

// appendChoiceIndex appends prefix and the choice's index.
func appendChoiceIndex(b []byte, c *wire.Choice, prefix string) []byte {
	b = append(b, prefix...)
	return wire.AppendInt(b, int64(c.Index))
}

// appendHead opens a completion object of the given type: its id, object,
// created, model and system_fingerprint, then a comma.
func appendHead(b []byte, c *wire.Choice, object string) []byte {
	b = append(b, `{"id":`...)
	b = wire.AppendJSONString(b, c.Resp.ID)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = wire.AppendInt(b, c.Resp.Created)
	b = append(b, `,"model":`...)
	b = wire.AppendJSONString(b, c.Resp.Model)
	return append(b, `,"system_fingerprint":null,`...)
}

func appendChunkHead(b []byte, c *wire.Choice) []byte {
	if c.Req.Legacy {
		return appendHead(b, c, textCompletionObject)
	}
	return appendHead(b, c, "chat.completion.chunk")
}

// appendChunkTail closes a chunk; with include_usage every chunk carries
// "usage":null except the final usage chunk, as OpenAI's do.
func appendChunkTail(b []byte, c *wire.Choice) []byte {
	if c.Req.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	return append(b, '}')
}

// endStream writes each choice's terminal chunk (finish_reason, and its
// metadata when it applies), the usage chunk when asked, and [DONE].
func endStream(cs []*wire.Choice) {
	out := cs[0].Resp.Out
	for _, c := range cs {
		out.Write(func(b []byte) []byte { return appendTerminal(b, c) })
	}
	if c := cs[0]; c.Req.IncludeUsage {
		out.Write(func(b []byte) []byte {
			b = appendChunkHead(b, c)
			b = append(b, `"choices":[],"usage":`...)
			b = appendUsage(b, cs)
			return append(b, '}')
		})
	}
	out.Done()
}

// appendTerminal appends the choice's terminal chunk.
func appendTerminal(b []byte, c *wire.Choice) []byte {
	b = appendChunkHead(b, c)
	if c.Req.Legacy {
		b = append(b, `"choices":[`...)
		b = appendTextChoice(b, c, "", c.FinishReason, nil)
		b = append(b, ']')
	} else {
		b = appendChoiceIndex(b, c, `"choices":[{"index":`)
		b = append(b, `,"delta":{},"logprobs":null,"finish_reason":`...)
		b = wire.AppendJSONString(b, c.FinishReason)
		b = append(b, `}]`...)
	}
	if c.Req.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	b = c.Perf.AppendMetadata(b)
	return append(b, '}')
}

// appendUsage appends the usage object: the prompt once, the completion
// tokens of every choice, and what the prompt reused from the prefix
// cache.
func appendUsage(b []byte, cs []*wire.Choice) []byte {
	completion := 0
	for _, c := range cs {
		completion += c.Completion
	}
	b = append(b, `{"prompt_tokens":`...)
	b = wire.AppendInt(b, int64(cs[0].PromptLen))
	b = append(b, `,"completion_tokens":`...)
	b = wire.AppendInt(b, int64(completion))
	b = append(b, `,"total_tokens":`...)
	b = wire.AppendInt(b, int64(cs[0].PromptLen+completion))
	b = appendPromptTokensDetails(b, cs[0].Prefix)
	return append(b, '}')
}

// appendPromptTokensDetails appends OpenAI's
// `,"prompt_tokens_details":{"cached_tokens":N}`, present on every usage
// (0 when nothing was reused).
func appendPromptTokensDetails(b []byte, u engine.PrefixUse) []byte {
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = wire.AppendInt(b, int64(u.Cached))
	return append(b, '}')
}

// writeCompletion writes the non-streaming chat.completion (or
// text_completion) with every choice.
func writeCompletion(cs []*wire.Choice) error {
	c := cs[0]
	size := 512
	for _, c := range cs {
		size += c.Text.Len() + 256*len(c.Logprobs)
	}
	b := make([]byte, 0, size)
	if c.Req.Legacy {
		b = appendHead(b, c, textCompletionObject)
		b = append(b, `"choices":[`...)
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendTextChoice(b, c, c.Text.String(), c.FinishReason, c.Logprobs)
		}
	} else {
		b = appendHead(b, c, "chat.completion")
		b = append(b, `"choices":[`...)
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMessageChoice(b, c)
		}
	}
	b = append(b, `],"usage":`...)
	b = appendUsage(b, cs)
	b = appendChoicesMetadata(b, cs)
	b = append(b, "}\n"...)
	return c.Resp.Out.WriteWhole(b)
}

// appendMessageChoice appends one choice of a chat.completion.
func appendMessageChoice(b []byte, c *wire.Choice) []byte {
	b = appendChoiceIndex(b, c, `{"index":`)
	b = append(b, `,"message":`...)
	if c.Agent != nil {
		b = appendAgentMessage(b, c.Agent)
	} else {
		b = append(b, `{"role":"assistant","content":`...)
		b = wire.AppendJSONString(b, c.Text.String())
		b = append(b, `,"refusal":null}`...)
	}
	b = append(b, `,"logprobs":`...)
	b = appendChatLogprobsList(b, c)
	b = append(b, `,"finish_reason":`...)
	b = wire.AppendJSONString(b, c.FinishReason)
	return append(b, '}')
}

// appendChoicesMetadata appends the metadata of a whole response:
// metadata.performance is the first choice's (the only one unless n > 1),
// and with n > 1 metadata.choices lists each choice's.
func appendChoicesMetadata(b []byte, cs []*wire.Choice) []byte {
	if !cs[0].Perf.OK {
		return b
	}
	b = append(b, `,"metadata":{"performance":`...)
	b = cs[0].Perf.AppendJSON(b)
	if len(cs) > 1 {
		b = append(b, `,"choices":[`...)
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendChoiceIndex(b, c, `{"index":`)
			b = append(b, `,"performance":`...)
			b = c.Perf.AppendJSON(b)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
