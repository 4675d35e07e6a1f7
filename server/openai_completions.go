package server

import (
	"fmt"
	"net/http"
	"strings"
)

// The OpenAI wire format of a legacy text completion (POST
// /v1/completions): every record, streamed or whole, is a
// text_completion whose choice carries "text" instead of chat's delta or
// message. Streams end with a choice of empty text and the finish reason,
// then the usage chunk when asked and [DONE], as chat streams do; the
// performance metadata and timing events are chat's.

const textCompletionObject = "text_completion"

// completionID is the response id: chatcmpl-… for chat, cmpl-… for a
// legacy completion, as OpenAI names them.
func completionID(req *chatRequest) string {
	id := newID()
	if req.Legacy {
		return "cmpl-" + strings.TrimPrefix(id, "chatcmpl-")
	}
	return id
}

// appendTextChunk appends one streamed text_completion carrying content.
func (x *exchange) appendTextChunk(b []byte, content string) []byte {
	b = x.appendHead(b, textCompletionObject)
	b = appendTextChoice(b, content, "")
	return x.appendChunkTail(b)
}

// appendTextChoice appends the choices array of one text choice; an empty
// finish is null.
func appendTextChoice(b []byte, text, finish string) []byte {
	b = append(b, `"choices":[{"text":`...)
	b = appendJSONString(b, text)
	b = append(b, `,"index":0,"logprobs":null,"finish_reason":`...)
	b = appendNullableString(b, finish)
	return append(b, `}]`...)
}

// writeTextCompletion writes the non-streaming text_completion.
func (x *exchange) writeTextCompletion(finish string, perf performance) error {
	b := x.appendHead(make([]byte, 0, 512+x.text.Len()), textCompletionObject)
	b = appendTextChoice(b, x.text.String(), finish)
	b = append(b, `,"usage":`...)
	b = x.appendUsage(b)
	b = perf.appendMetadata(b)
	b = append(b, "}\n"...)
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(http.StatusOK)
	if _, err := x.w.Write(b); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}
