package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/kiln-ai/kiln/server/wire"
)

// POST /tokenize and POST /detokenize, in llama.cpp server's shapes:
//
//	{"content": "text", "add_special": false} -> {"tokens": [1, 2, 3]}
//	{"tokens": [1, 2, 3]}                      -> {"content": "text"}
//
// Tokenization recognises the model's special tokens in the text (as
// llama.cpp's parse_special does); add_special prepends BOS when the
// model's tokenizer adds one to prompts. Detokenization joins the tokens'
// text without the whole-sequence space clean-up, so it inverts /tokenize.

// tokenize serves POST /tokenize.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) error {
	fields, err := s.readObject(w, r)
	if err != nil {
		return err
	}
	raw, ok := fields["content"]
	if !ok || wire.IsNull(raw) {
		return wire.Invalid("content", "missing_required_parameter", "missing required parameter: 'content'")
	}
	var content string
	if err := json.Unmarshal(raw, &content); err != nil {
		return wire.WrongType("content", "a string", raw)
	}
	addSpecial, err := wire.OptionalBool(fields, "add_special")
	if err != nil {
		return err
	}
	ids := s.tok.EncodeSpecial(content)
	if addSpecial != nil && *addSpecial {
		ids = s.tok.WithBOS(ids)
	}
	b := make([]byte, 0, 16+8*len(ids))
	b = append(b, `{"tokens":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendInt(b, int64(id))
	}
	return writeJSON(w, http.StatusOK, append(b, "]}\n"...))
}

// detokenize serves POST /detokenize.
func (s *Server) detokenize(w http.ResponseWriter, r *http.Request) error {
	fields, err := s.readObject(w, r)
	if err != nil {
		return err
	}
	raw, ok := fields["tokens"]
	if !ok || wire.IsNull(raw) {
		return wire.Invalid("tokens", "missing_required_parameter", "missing required parameter: 'tokens'")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return wire.WrongType("tokens", "an array of token ids", raw)
	}
	vocab := s.tok.VocabSize()
	ids := make([]int, len(items))
	for i, it := range items {
		key := fmt.Sprintf("tokens[%d]", i)
		v, err := wire.ParseInt(key, it)
		if err != nil {
			return err
		}
		if *v < 0 || *v >= int64(vocab) {
			return wire.Invalid(key, "invalid_value", "token %d is outside the vocabulary of %d tokens", *v, vocab)
		}
		ids[i] = int(*v)
	}
	b := append([]byte(`{"content":`), nil...)
	b = wire.AppendJSONString(b, s.tok.Decode(ids))
	return writeJSON(w, http.StatusOK, append(b, "}\n"...))
}

// readObject decodes the request body (read whole and bounded by the body
// middleware, body.go) as one JSON object.
func (s *Server) readObject(_ http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, error) {
	data, err := requestBody(r)
	if err != nil {
		return nil, err
	}
	return wire.DecodeObject(data)
}
