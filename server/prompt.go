package server

import (
	"errors"
	"strings"

	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/server/wire"
)

// encodePrompt renders the chat template and tokenizes the result
// (chat.EncodePrompt, shared with `kiln generate --chat` and training),
// recognising special tokens only in the template's own markup, and
// prepending BOS when the tokenizer asks for it and the template did not
// already.
//
// message contents are text: a "<|im_end|>" or "</s>" that a user writes
// is tokenized as the characters it is, never as the control token, so no
// one can forge a role boundary (llama.cpp and transformers tokenize the
// whole rendered prompt with special tokens parsed, which allows it). The
// rendering records where the contents lie (chat.RenderSpans) and the
// tokenizer skips special tokens there (tokenizer.EncodeTemplated); the
// segmentation is otherwise that of the whole prompt, so a prompt without
// such text gets exactly the ids it always had. For a template that
// transforms contents beyond trimming, the spans are unknown: a content
// holding control-token text is then refused (400) rather than guessed at.
func (s *Server) encodePrompt(req *wire.Request) ([]int, error) {
	msgs := req.Messages
	cm := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		cm[i] = chat.Message{Role: m.Role, Content: m.Content, NullContent: m.ContentNull, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, c := range m.ToolCalls {
			cm[i].ToolCalls = append(cm[i].ToolCalls, chat.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	opt := chat.Options{AddGenerationPrompt: true, Kwargs: req.TemplateKwargs}
	if req.Agent.ToolsOffered() {
		for _, t := range req.Agent.Tools {
			opt.Tools = append(opt.Tools, chat.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
	}
	ids, err := s.tmpl.EncodePrompt(cm, s.tok, opt)
	var ce *chat.ControlTextError
	if errors.As(err, &ce) {
		return nil, wire.Invalid(ce.Param, "invalid_value",
			"'%s' contains control-token text that this model's chat template cannot carry as plain text", ce.Param)
	}
	var ie *chat.InputError
	if errors.As(err, &ie) {
		return nil, wire.Invalid(ie.Param, "invalid_value", "'%s' must be a JSON object: %v", ie.Param, ie.Err)
	}
	if err != nil {
		return nil, wire.Invalid(promptParam(req), "invalid_value", "the messages cannot be rendered with the model's chat template: %v", err)
	}
	if len(ids) == 0 {
		return nil, wire.Invalid(promptParam(req), "invalid_value", "the messages produce an empty prompt")
	}
	return ids, nil
}

// promptThinks reports whether the prompt ends inside an open thinking
// section (Qwen3 and Qwen3.5 generation prompts open "<think>\n"): the
// output then starts as reasoning.
func (s *Server) promptThinks(prompt []int) bool {
	tail := s.tok.Decode(prompt[max(len(prompt)-4, 0):])
	return strings.HasSuffix(strings.TrimRight(tail, " \n"), "<think>")
}
