package server

import "github.com/kiln-ai/kiln/engine/chat"

// encodePrompt renders the chat template and tokenizes the result,
// recognising the template's special tokens and prepending BOS when the
// tokenizer asks for it and the template did not already.
func (s *Server) encodePrompt(msgs []chatMessage) ([]int, error) {
	cm := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		cm[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	opt := chat.Options{AddGenerationPrompt: true}
	if id := s.tok.BOS(); id >= 0 {
		opt.BOS = s.tok.Token(id)
	}
	if id := s.tok.EOS(); id >= 0 {
		opt.EOS = s.tok.Token(id)
	}
	text, err := s.tmpl.Render(cm, opt)
	if err != nil {
		return nil, invalid("messages", "invalid_value", "the messages cannot be rendered with the model's chat template: %v", err)
	}
	ids := s.tok.EncodeSpecial(text)
	if bos := s.tok.BOS(); s.tok.AddBOS() && bos >= 0 && (len(ids) == 0 || ids[0] != bos) {
		ids = append([]int{bos}, ids...)
	}
	if len(ids) == 0 {
		return nil, invalid("messages", "invalid_value", "the messages produce an empty prompt")
	}
	return ids, nil
}
