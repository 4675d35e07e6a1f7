package tokenizer

// Decode turns ids back into text. Special and user-defined tokens render as
// their text (so a rendered chat template round-trips through
// EncodeSpecial), SentencePiece "▁" becomes a space and <0xXX> its byte,
// byte-level BPE pieces their bytes. With a SentencePiece-style vocabulary
// that adds a space prefix, one leading space of the first token is dropped,
// so Decode(Encode(s)) == s. Ids out of range are skipped. The result may be
// invalid UTF-8 when the ids split a character.
func (t *Tokenizer) Decode(ids []int) string {
	n := 0
	for _, id := range ids {
		if id >= 0 && id < len(t.decoded) {
			n += len(t.decoded[id])
		}
	}
	out := make([]byte, 0, n)
	first := true
	for _, id := range ids {
		if id < 0 || id >= len(t.decoded) {
			continue
		}
		d := t.decoded[id]
		if first && t.addSpacePrefix && len(d) > 0 && d[0] == ' ' {
			d = d[1:]
		}
		first = false
		out = append(out, d...)
	}
	return string(out)
}

// Decoder turns a stream of generated ids into text as they arrive. It holds
// back the bytes of an incomplete UTF-8 character until a later token
// completes it, and gives control and unknown tokens no text (they are still
// tokens: Next returns "" for them). Unlike Decode it keeps a leading space,
// since generated text continues a prompt. A Decoder is not safe for
// concurrent use; one belongs to one generation.
type Decoder struct {
	t       *Tokenizer
	pending []byte
}

// NewDecoder starts a streaming decode.
func (t *Tokenizer) NewDecoder() *Decoder { return &Decoder{t: t} }

// Next returns the text that id completes, possibly "". In the steady state
// (whole characters per token) it does not allocate.
func (d *Decoder) Next(id int) string {
	if id < 0 || id >= len(d.t.stream) {
		return ""
	}
	s := d.t.stream[id]
	if len(d.pending) == 0 {
		if d.t.streamWhole[id] {
			return s
		}
	} else if s == "" {
		return ""
	}
	d.pending = append(d.pending, s...)
	n := completePrefix(d.pending)
	if n == 0 {
		return ""
	}
	out := string(d.pending[:n])
	d.pending = d.pending[:copy(d.pending, d.pending[n:])]
	return out
}

// Flush returns the bytes still held back (an incomplete character at the
// end of generation, as raw bytes) and resets the decoder.
func (d *Decoder) Flush() string {
	out := string(d.pending)
	d.pending = d.pending[:0]
	return out
}

// Piece is the text id streams as: its bytes as a Decoder would emit them
// (possibly part of a UTF-8 character), "" for control and unknown tokens
// and for ids out of range. Log probabilities name tokens by it, and a
// grammar reads the vocabulary through it.
func (t *Tokenizer) Piece(id int) string {
	if id < 0 || id >= len(t.stream) {
		return ""
	}
	return t.stream[id]
}
