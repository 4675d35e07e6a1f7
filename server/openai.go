package server

import (
	"crypto/rand"
	"encoding/hex"
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
// content alone, or with tools the parser's pieces (toolstream.go).
func (x *exchange) appendPieceChunk(b []byte, pc *piece, lp *tokenLogprob) []byte {
	b = x.appendChunkHead(b)
	b = x.appendChoiceIndex(b, `"choices":[{"index":`)
	b = append(b, `,"delta":`...)
	b = appendDelta(b, !x.roleSent, pc)
	x.roleSent = true
	b = append(b, `,"logprobs":`...)
	b = x.appendChatLogprobs(b, lp)
	b = append(b, `,"finish_reason":null}]`...)
	return x.appendChunkTail(b)
}

// appendChoiceIndex appends prefix and the choice's index.
func (x *exchange) appendChoiceIndex(b []byte, prefix string) []byte {
	b = append(b, prefix...)
	return appendInt(b, int64(x.index))
}

// appendHead opens a completion object of the given type: its id, object,
// created, model and system_fingerprint, then a comma.
func (x *exchange) appendHead(b []byte, object string) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, x.id)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = appendInt(b, x.created)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, x.s.modelID)
	return append(b, `,"system_fingerprint":null,`...)
}

func (x *exchange) appendChunkHead(b []byte) []byte {
	if x.req.Legacy {
		return x.appendHead(b, textCompletionObject)
	}
	return x.appendHead(b, "chat.completion.chunk")
}

// appendChunkTail closes a chunk; with include_usage every chunk carries
// "usage":null except the final usage chunk, as OpenAI's do.
func (x *exchange) appendChunkTail(b []byte) []byte {
	if x.req.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	return append(b, '}')
}

// endStream writes each choice's terminal chunk (finish_reason, and its
// metadata when it applies), the usage chunk when asked, and [DONE].
func endStream(xs []*exchange) {
	p := xs[0].reply
	for _, x := range xs {
		p.write(x.appendTerminal)
	}
	if x := xs[0]; x.req.IncludeUsage {
		p.write(func(b []byte) []byte {
			b = x.appendChunkHead(b)
			b = append(b, `"choices":[],"usage":`...)
			b = appendUsage(b, xs)
			return append(b, '}')
		})
	}
	p.done()
}

// appendTerminal appends the choice's terminal chunk.
func (x *exchange) appendTerminal(b []byte) []byte {
	b = x.appendChunkHead(b)
	if x.req.Legacy {
		b = append(b, `"choices":[`...)
		b = x.appendTextChoice(b, "", x.finishReason, nil)
		b = append(b, ']')
	} else {
		b = x.appendChoiceIndex(b, `"choices":[{"index":`)
		b = append(b, `,"delta":{},"logprobs":null,"finish_reason":`...)
		b = appendJSONString(b, x.finishReason)
		b = append(b, `}]`...)
	}
	if x.req.IncludeUsage {
		b = append(b, `,"usage":null`...)
	}
	b = x.perf.appendMetadata(b)
	return append(b, '}')
}

// appendUsage appends the usage object: the prompt once, the completion
// tokens of every choice, and what the prompt reused from the prefix
// cache.
func appendUsage(b []byte, xs []*exchange) []byte {
	completion := 0
	for _, x := range xs {
		completion += x.completion
	}
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, int64(xs[0].promptLen))
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, int64(completion))
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, int64(xs[0].promptLen+completion))
	b = appendPromptTokensDetails(b, xs[0].prefix)
	return append(b, '}')
}

// writeCompletion writes the non-streaming chat.completion (or
// text_completion) with every choice.
func writeCompletion(xs []*exchange) error {
	x := xs[0]
	size := 512
	for _, c := range xs {
		size += c.text.Len() + 256*len(c.logprobs)
	}
	b := make([]byte, 0, size)
	if x.req.Legacy {
		b = x.appendHead(b, textCompletionObject)
		b = append(b, `"choices":[`...)
		for i, c := range xs {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.appendTextChoice(b, c.text.String(), c.finishReason, c.logprobs)
		}
	} else {
		b = x.appendHead(b, "chat.completion")
		b = append(b, `"choices":[`...)
		for i, c := range xs {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.appendMessageChoice(b)
		}
	}
	b = append(b, `],"usage":`...)
	b = appendUsage(b, xs)
	b = appendChoicesMetadata(b, xs)
	b = append(b, "}\n"...)
	return x.writeWhole(b)
}

// appendMessageChoice appends one choice of a chat.completion.
func (x *exchange) appendMessageChoice(b []byte) []byte {
	b = x.appendChoiceIndex(b, `{"index":`)
	b = append(b, `,"message":`...)
	if x.agent != nil {
		b = x.agent.appendMessage(b)
	} else {
		b = append(b, `{"role":"assistant","content":`...)
		b = appendJSONString(b, x.text.String())
		b = append(b, `,"refusal":null}`...)
	}
	b = append(b, `,"logprobs":`...)
	b = x.appendChatLogprobsList(b)
	b = append(b, `,"finish_reason":`...)
	b = appendJSONString(b, x.finishReason)
	return append(b, '}')
}

// appendChoicesMetadata appends the metadata of a whole response:
// metadata.performance is the first choice's (the only one unless n > 1),
// and with n > 1 metadata.choices lists each choice's.
func appendChoicesMetadata(b []byte, xs []*exchange) []byte {
	if !xs[0].perf.ok {
		return b
	}
	b = append(b, `,"metadata":{"performance":`...)
	b = xs[0].perf.appendJSON(b)
	if len(xs) > 1 {
		b = append(b, `,"choices":[`...)
		for i, x := range xs {
			if i > 0 {
				b = append(b, ',')
			}
			b = x.appendChoiceIndex(b, `{"index":`)
			b = append(b, `,"performance":`...)
			b = x.perf.appendJSON(b)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
