package openai

import "github.com/kiln-ai/kiln/server/wire"

// The OpenAI wire format of a legacy text completion (POST
// /v1/completions): every record, streamed or whole, is a
// text_completion whose choice carries "text" instead of chat's delta or
// message. Streams end with a choice of empty text and the finish reason,
// then the usage chunk when asked and [DONE], as chat streams do; the
// performance metadata and timing events are chat's.

const textCompletionObject = "text_completion"

// appendTextChunk appends one streamed text_completion carrying content.
func appendTextChunk(b []byte, c *wire.Choice, content string, lp *wire.TokenLogprob) []byte {
	b = appendHead(b, c, textCompletionObject)
	var lps []wire.TokenLogprob
	if lp != nil {
		lps = []wire.TokenLogprob{*lp}
	}
	b = append(b, `"choices":[`...)
	b = appendTextChoice(b, c, content, "", lps)
	b = append(b, ']')
	return appendChunkTail(b, c)
}

// appendTextChoice appends one text choice; an empty finish is null.
func appendTextChoice(b []byte, c *wire.Choice, text, finish string, lps []wire.TokenLogprob) []byte {
	b = append(b, `{"text":`...)
	b = wire.AppendJSONString(b, text)
	b = appendChoiceIndex(b, c, `,"index":`)
	b = append(b, `,"logprobs":`...)
	b = appendLegacyLogprobs(b, c, lps)
	b = append(b, `,"finish_reason":`...)
	b = wire.AppendNullableString(b, finish)
	return append(b, '}')
}
