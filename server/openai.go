package server

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// The OpenAI wire format of a chat completion: the chat.completion.chunk
// records of a stream, its terminal and usage chunks, and the whole
// chat.completion of a non-streaming response.

// newID returns an id of the form the APIs use: prefix, then 24 random
// hex digits.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// appendPieceChunk appends a token's chat chunk whose delta is pc: the
// content alone, or with tools the parser's pieces (toolstream.go); role
// adds the assistant's role, which the choice's first chunk carries.
func (c *choice) appendPieceChunk(b []byte, role bool, pc *piece, lp *tokenLogprob) []byte {
	b = c.appendChunkHead(b)
	b = c.appendChoiceIndex(b, `"choices":[{"index":`)
	b = append(b, `,"delta":`...)
	b = appendDelta(b, role, pc)
	b = append(b, `,"logprobs":`...)
	b = c.appendChatLogprobs(b, lp)
	b = append(b, `,"finish_reason":null}]`...)
	return c.appendChunkTail(b)
}

// appendChoiceIndex appends prefix and the choice's index.
func (c *choice) appendChoiceIndex(b []byte, prefix string) []byte {
	b = append(b, prefix...)
	return appendInt(b, int64(c.index))
}

// appendHead opens a completion object of the given type: its id, object,
// created, model and system_fingerprint, then a comma.
func (c *choice) appendHead(b []byte, object string) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, c.resp.id)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = appendInt(b, c.resp.created)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, c.resp.model)
	return append(b, `,"system_fingerprint":null,`...)
}

func (c *choice) appendChunkHead(b []byte) []byte {
	if c.req.Legacy {
		return c.appendHead(b, textCompletionObject)
	}
	return c.appendHead(b, "chat.completion.chunk")
}

// appendChunkTail closes a chunk; with include_usage every chunk carries
// "usage":null except the final usage chunk, as OpenAI's do.
func (c *choice) appendChunkTail(b []byte) []byte {
	if c.req.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	return append(b, '}')
}

// endStream writes each choice's terminal chunk (finish_reason, and its
// metadata when it applies), the usage chunk when asked, and [DONE].
func endStream(cs []*choice) {
	out := cs[0].resp.out
	for _, c := range cs {
		out.write(c.appendTerminal)
	}
	if c := cs[0]; c.req.IncludeUsage {
		out.write(func(b []byte) []byte {
			b = c.appendChunkHead(b)
			b = append(b, `"choices":[],"usage":`...)
			b = appendUsage(b, cs)
			return append(b, '}')
		})
	}
	out.done()
}

// appendTerminal appends the choice's terminal chunk.
func (c *choice) appendTerminal(b []byte) []byte {
	b = c.appendChunkHead(b)
	if c.req.Legacy {
		b = append(b, `"choices":[`...)
		b = c.appendTextChoice(b, "", c.finishReason, nil)
		b = append(b, ']')
	} else {
		b = c.appendChoiceIndex(b, `"choices":[{"index":`)
		b = append(b, `,"delta":{},"logprobs":null,"finish_reason":`...)
		b = appendJSONString(b, c.finishReason)
		b = append(b, `}]`...)
	}
	if c.req.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	b = c.perf.appendMetadata(b)
	return append(b, '}')
}

// appendUsage appends the usage object: the prompt once, the completion
// tokens of every choice, and what the prompt reused from the prefix
// cache.
func appendUsage(b []byte, cs []*choice) []byte {
	completion := 0
	for _, c := range cs {
		completion += c.completion
	}
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, int64(cs[0].promptLen))
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, int64(completion))
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, int64(cs[0].promptLen+completion))
	b = appendPromptTokensDetails(b, cs[0].prefix)
	return append(b, '}')
}

// writeCompletion writes the non-streaming chat.completion (or
// text_completion) with every choice.
func writeCompletion(cs []*choice) error {
	c := cs[0]
	size := 512
	for _, c := range cs {
		size += c.text.Len() + 256*len(c.logprobs)
	}
	b := make([]byte, 0, size)
	if c.req.Legacy {
		b = c.appendHead(b, textCompletionObject)
		b = append(b, `"choices":[`...)
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.appendTextChoice(b, c.text.String(), c.finishReason, c.logprobs)
		}
	} else {
		b = c.appendHead(b, "chat.completion")
		b = append(b, `"choices":[`...)
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.appendMessageChoice(b)
		}
	}
	b = append(b, `],"usage":`...)
	b = appendUsage(b, cs)
	b = appendChoicesMetadata(b, cs)
	b = append(b, "}\n"...)
	return c.resp.out.writeWhole(b)
}

// appendMessageChoice appends one choice of a chat.completion.
func (c *choice) appendMessageChoice(b []byte) []byte {
	b = c.appendChoiceIndex(b, `{"index":`)
	b = append(b, `,"message":`...)
	if c.agent != nil {
		b = appendAgentMessage(b, c.agent)
	} else {
		b = append(b, `{"role":"assistant","content":`...)
		b = appendJSONString(b, c.text.String())
		b = append(b, `,"refusal":null}`...)
	}
	b = append(b, `,"logprobs":`...)
	b = c.appendChatLogprobsList(b)
	b = append(b, `,"finish_reason":`...)
	b = appendJSONString(b, c.finishReason)
	return append(b, '}')
}

// appendChoicesMetadata appends the metadata of a whole response:
// metadata.performance is the first choice's (the only one unless n > 1),
// and with n > 1 metadata.choices lists each choice's.
func appendChoicesMetadata(b []byte, cs []*choice) []byte {
	if !cs[0].perf.ok {
		return b
	}
	b = append(b, `,"metadata":{"performance":`...)
	b = cs[0].perf.appendJSON(b)
	if len(cs) > 1 {
		b = append(b, `,"choices":[`...)
		for i, c := range cs {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.appendChoiceIndex(b, `{"index":`)
			b = append(b, `,"performance":`...)
			b = c.perf.appendJSON(b)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// openaiWire is the OpenAI format of chat and legacy completions
// (openai.go, openai_completions.go). It keeps, per choice, whether the
// choice's first chunk (the one with the role) was written.
type openaiWire struct {
	roleSent []bool
}

func (*openaiWire) open(*choice) {}

func (w *openaiWire) piece(c *choice, pc *piece, lp *tokenLogprob) {
	if c.req.Legacy {
		c.resp.out.write(func(b []byte) []byte { return c.appendTextChunk(b, pc.content, lp) })
		return
	}
	for len(w.roleSent) <= c.index {
		w.roleSent = append(w.roleSent, false)
	}
	role := !w.roleSent[c.index]
	w.roleSent[c.index] = true
	c.resp.out.write(func(b []byte) []byte { return c.appendPieceChunk(b, role, pc, lp) })
}

// timing writes the event as its own data line, right after the token's
// chunk: the events pair with the chunks one to one.
func (*openaiWire) timing(c *choice, ev *latency.TokenEvent) { c.resp.out.write(ev.AppendJSON) }

func (*openaiWire) close(cs []*choice) { endStream(cs) }

func (*openaiWire) whole(cs []*choice) error { return writeCompletion(cs) }

func (*openaiWire) cut(c *choice) {
	c.resp.out.write(func(b []byte) []byte { return appendErrorObject(b, errCut) })
	c.resp.out.done()
}
