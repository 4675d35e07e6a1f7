package server

// The OpenAI wire format of a legacy text completion (POST
// /v1/completions): every record, streamed or whole, is a
// text_completion whose choice carries "text" instead of chat's delta or
// message. Streams end with a choice of empty text and the finish reason,
// then the usage chunk when asked and [DONE], as chat streams do; the
// performance metadata and timing events are chat's.

const textCompletionObject = "text_completion"

// appendTextChunk appends one streamed text_completion carrying content.
func (c *choice) appendTextChunk(b []byte, content string, lp *tokenLogprob) []byte {
	b = c.appendHead(b, textCompletionObject)
	var lps []tokenLogprob
	if lp != nil {
		lps = []tokenLogprob{*lp}
	}
	b = append(b, `"choices":[`...)
	b = c.appendTextChoice(b, content, "", lps)
	b = append(b, ']')
	return c.appendChunkTail(b)
}

// appendTextChoice appends one text choice; an empty finish is null.
func (c *choice) appendTextChoice(b []byte, text, finish string, lps []tokenLogprob) []byte {
	b = append(b, `{"text":`...)
	b = appendJSONString(b, text)
	b = c.appendChoiceIndex(b, `,"index":`)
	b = append(b, `,"logprobs":`...)
	b = c.appendLegacyLogprobs(b, lps)
	b = append(b, `,"finish_reason":`...)
	b = appendNullableString(b, finish)
	return append(b, '}')
}
