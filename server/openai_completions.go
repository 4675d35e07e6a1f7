package server

// The OpenAI wire format of a legacy text completion (POST
// /v1/completions): every record, streamed or whole, is a
// text_completion whose choice carries "text" instead of chat's delta or
// message. Streams end with a choice of empty text and the finish reason,
// then the usage chunk when asked and [DONE], as chat streams do; the
// performance metadata and timing events are chat's.

const textCompletionObject = "text_completion"

// completionID is the response id: chatcmpl-… for chat, cmpl-… for a
// legacy completion, resp_… for Responses, msg_… for Messages, as their
// APIs name them.
func completionID(req *chatRequest) string { return newID(idPrefixes[req.api]) }

var idPrefixes = [...]string{apiChat: "chatcmpl-", apiCompletions: "cmpl-", apiResponses: "resp_", apiMessages: "msg_"}

// appendTextChunk appends one streamed text_completion carrying content.
func (x *exchange) appendTextChunk(b []byte, content string, lp *tokenLogprob) []byte {
	b = x.appendHead(b, textCompletionObject)
	var lps []tokenLogprob
	if lp != nil {
		lps = []tokenLogprob{*lp}
	}
	b = append(b, `"choices":[`...)
	b = x.appendTextChoice(b, content, "", lps)
	b = append(b, ']')
	return x.appendChunkTail(b)
}

// appendTextChoice appends one text choice; an empty finish is null.
func (x *exchange) appendTextChoice(b []byte, text, finish string, lps []tokenLogprob) []byte {
	b = append(b, `{"text":`...)
	b = appendJSONString(b, text)
	b = x.appendChoiceIndex(b, `,"index":`)
	b = append(b, `,"logprobs":`...)
	b = x.appendLegacyLogprobs(b, lps)
	b = append(b, `,"finish_reason":`...)
	b = appendNullableString(b, finish)
	return append(b, '}')
}
