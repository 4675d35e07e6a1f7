package server

import (
	"net/http"

	"github.com/kiln-ai/kiln/engine/tokenizer"
	"github.com/kiln-ai/kiln/server/wire"
)

// The early size check. Rendering and tokenizing a prompt costs several
// times its bytes in memory, so a prompt that cannot fit the context is
// refused from its byte count alone, before either runs: no token of the
// vocabulary stands for more bytes of text than its longest piece (a
// SentencePiece "▁" is three bytes for one space, a byte-level BPE piece
// at least one byte per byte, a byte-fallback piece six for one), so
// message content longer than the context length times that many bytes
// needs more tokens than the context holds, whatever the template adds.
// NFC normalisation (Hugging Face tokenizers) can shrink text before it is
// split, at most threefold (a Hangul L+V+T jamo sequence, nine bytes,
// composes to one three-byte syllable), so the bound allows for that.
const nfcShrink = 3

// maxContentBytes is the content bound for a context of seqLen tokens.
func maxContentBytes(tok *tokenizer.Tokenizer, seqLen int) int {
	longest := 1
	for id := range tok.VocabSize() {
		longest = max(longest, len(tok.Token(id)))
	}
	return seqLen * longest * nfcShrink
}

// checkContentSize refuses a request whose text cannot fit the context:
// the messages' content of a chat, the prompt of a legacy completion.
func (s *Server) checkContentSize(req *wire.Request) error {
	n := len(req.Prompt)
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	if n > s.maxContentBytes {
		return &wire.Error{Status: http.StatusBadRequest, Type: wire.TypeInvalidRequest, Param: promptParam(req), Code: "context_length_exceeded",
			Message: "the prompt does not fit the model's context length: its messages hold more text than the context can take"}
	}
	return nil
}
