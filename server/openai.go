package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
)

// The OpenAI wire format of a chat completion: the chat.completion.chunk
// records of a stream, its terminal and usage chunks, and the whole
// chat.completion of a non-streaming response.

// newID returns an OpenAI-style completion id.
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}

// appendChunk appends one chat.completion.chunk carrying content. The
// first chunk also carries the assistant role, as OpenAI's do.
func (x *exchange) appendChunk(b []byte, content string) []byte {
	if x.req.Legacy {
		return x.appendTextChunk(b, content)
	}
	b = x.appendChunkHead(b)
	b = append(b, `"choices":[{"index":0,"delta":{`...)
	if !x.roleSent {
		x.roleSent = true
		b = append(b, `"role":"assistant",`...)
	}
	b = append(b, `"content":`...)
	b = appendJSONString(b, content)
	b = append(b, `},"logprobs":null,"finish_reason":null}]`...)
	return x.appendChunkTail(b)
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

// endStream writes the terminal chunk (finish_reason, and metadata when it
// applies), the usage chunk when asked, and [DONE].
func (x *exchange) endStream(finish string, perf performance) error {
	x.write(func(b []byte) []byte {
		b = x.appendChunkHead(b)
		if x.req.Legacy {
			b = appendTextChoice(b, "", finish)
		} else {
			b = append(b, `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
			b = appendJSONString(b, finish)
			b = append(b, `}]`...)
		}
		if x.req.IncludeUsage {
			b = append(b, `,"usage":null`...)
		}
		b = perf.appendMetadata(b)
		return append(b, '}')
	})
	if x.req.IncludeUsage {
		x.write(func(b []byte) []byte {
			b = x.appendChunkHead(b)
			b = append(b, `"choices":[],"usage":`...)
			b = x.appendUsage(b)
			return append(b, '}')
		})
	}
	if x.writeErr == nil {
		if err := x.sse.done(); err != nil {
			x.writeErr = err
		}
	}
	return nil // a failed write means the client left; nothing to report to it
}

func (x *exchange) appendUsage(b []byte) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, int64(x.promptLen))
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, int64(x.completion))
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, int64(x.promptLen+x.completion))
	b = appendPromptTokensDetails(b, x.prefix)
	return append(b, '}')
}

// writeCompletion writes the non-streaming chat.completion.
func (x *exchange) writeCompletion(finish string, perf performance) error {
	if x.req.Legacy {
		return x.writeTextCompletion(finish, perf)
	}
	b := x.appendHead(make([]byte, 0, 512+x.text.Len()), "chat.completion")
	b = append(b, `"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	b = appendJSONString(b, x.text.String())
	b = append(b, `,"refusal":null},"logprobs":null,"finish_reason":`...)
	b = appendJSONString(b, finish)
	b = append(b, `}],"usage":`...)
	b = x.appendUsage(b)
	b = perf.appendMetadata(b)
	b = append(b, "}\n"...)
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(http.StatusOK)
	_, err := x.w.Write(b)
	if err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}
