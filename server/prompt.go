package server

import (
	"errors"
	"fmt"

	"github.com/kiln-ai/kiln/engine/chat"
)

// encodePrompt renders the chat template and tokenizes the result
// (chat.EncodePrompt, shared with `kiln generate --chat` and training),
// recognising special tokens only in the template's own markup, and
// prepending BOS when the tokenizer asks for it and the template did not
// already.
//
// Message contents are text: a "<|im_end|>" or "</s>" that a user writes
// is tokenized as the characters it is, never as the control token, so no
// one can forge a role boundary (llama.cpp and transformers tokenize the
// whole rendered prompt with special tokens parsed, which allows it). The
// rendering records where the contents lie (chat.RenderSpans) and the
// tokenizer skips special tokens there (tokenizer.EncodeTemplated); the
// segmentation is otherwise that of the whole prompt, so a prompt without
// such text gets exactly the ids it always had. For a template that
// transforms contents beyond trimming, the spans are unknown: a content
// holding control-token text is then refused (400) rather than guessed at.
func (s *Server) encodePrompt(msgs []chatMessage) ([]int, error) {
	cm := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		cm[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	ids, err := s.tmpl.EncodePrompt(cm, s.tok, chat.Options{AddGenerationPrompt: true})
	var ce *chat.ControlTextError
	if errors.As(err, &ce) {
		return nil, invalid(messageParam(ce.Message), "invalid_value",
			"the message content contains control-token text that this model's chat template cannot carry as plain text")
	}
	if err != nil {
		return nil, invalid("messages", "invalid_value", "the messages cannot be rendered with the model's chat template: %v", err)
	}
	if len(ids) == 0 {
		return nil, invalid("messages", "invalid_value", "the messages produce an empty prompt")
	}
	return ids, nil
}

// messageParam names the content of message i in an error.
func messageParam(i int) string { return fmt.Sprintf("messages[%d].content", i) }
