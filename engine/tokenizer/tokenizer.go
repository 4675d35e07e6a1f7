package tokenizer

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Errors that callers act on.
var (
	// ErrUnsupported reports tokenizer data of a kind this package does not
	// implement (another tokenizer model, pre-tokenizer or normalizer).
	ErrUnsupported = errors.New("tokenizer: unsupported")
	// ErrFormat reports malformed or inconsistent tokenizer data.
	ErrFormat = errors.New("tokenizer: malformed data")
)

// TokenType is the role of a vocabulary entry, numbered as GGUF's
// tokenizer.ggml.token_type.
type TokenType uint8

// Token types.
const (
	TypeUndefined   TokenType = 0
	TypeNormal      TokenType = 1
	TypeUnknown     TokenType = 2
	TypeControl     TokenType = 3 // special: BOS, EOS, chat markers
	TypeUserDefined TokenType = 4 // added text that always tokenizes whole
	TypeUnused      TokenType = 5
	TypeByte        TokenType = 6 // SentencePiece byte fallback <0xXX>
)

// kind is the segmentation algorithm.
type kind uint8

const (
	kindSPM   kind = iota + 1 // SentencePiece-style: bigram merges by score, byte fallback
	kindBPE                   // byte-level BPE: pre-tokenizer split, merges by rank
	kindWords                 // longest match over whole-word pieces, byte fallback (English)
)

// Tokenizer converts between text and token ids. It is immutable after
// construction and safe for concurrent use.
type Tokenizer struct {
	kind   kind
	pieces []string
	types  []TokenType
	scores []float32 // SPM merge priority, higher first
	// spmPairs maps two adjacent SPM pieces (left<<32|right) to the piece
	// their concatenation is, sparing a string lookup per candidate merge.
	spmPairs map[uint64]int
	asciiID  [utf8.RuneSelf]int // SPM: the piece of each ASCII character, -1 when none
	// spmSplit is set when no piece holds "▁" after another character, so
	// no merge can cross the start of a space run and the text can be
	// merged run by run (exactly, and with small queues).
	spmSplit bool
	ids      map[string]int // piece to id, for the pieces text may produce

	decoded []string // what each id contributes to Decode
	stream  []string // what each id contributes to streaming output
	// streamWhole[id] reports that stream[id] ends on a complete UTF-8
	// sequence, so a decoder with nothing pending can return it as is.
	streamWhole []bool

	byteID [256]int // SPM/words: the <0xXX> piece for each byte, -1 when absent

	// byte-level BPE
	byteSym      [256]int          // the vocabulary id of each byte's code point
	merges       map[uint64]uint64 // left<<32|right -> rank<<32|merged
	split        splitter
	ignoreMerges bool    // a word that is itself a token is not merged (Llama 3)
	nfc          bool    // NFC-normalise text before splitting (Hugging Face normalizer)
	prefixSpace  bool    // BPE: ByteLevel add_prefix_space
	clean        cleanup // Detokenize's space clean-up

	addSpacePrefix bool // SPM/words: "▁" before the text (and after each special)
	maxPiece       int  // words: longest piece in bytes

	specials [256][]specialToken // by first byte, longest first

	bos, eos, unk int
	addBOS        bool
	stop          []int
	chatTemplate  string
}

type specialToken struct {
	text string
	id   int
	// always is set for user-defined tokens, which split the text in Encode
	// as well as in EncodeSpecial.
	always bool
}

const spaceMarker = "\u2581" // "▁", SentencePiece's escaped space

// endOfGeneration lists the texts of tokens that end a turn in common chat
// formats; a vocabulary holding one of them as a special (not a normal)
// token stops on it, as llama.cpp does.
var endOfGeneration = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
	"<|end_of_text|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>",
	"<end_of_utterance>", "<|return|>", "<|call|>",
}

// finish fills the derived tables once pieces, types, ids and the special
// ids are set.
func (t *Tokenizer) finish() {
	n := len(t.pieces)
	t.decoded = make([]string, n)
	t.stream = make([]string, n)
	t.streamWhole = make([]bool, n)
	for i := range t.byteID {
		t.byteID[i] = -1
	}
	for id, p := range t.pieces {
		var d string
		switch t.types[id] {
		case TypeControl, TypeUnknown, TypeUserDefined:
			d = p
		case TypeUnused:
		case TypeByte:
			if b, ok := parseByteToken(p); ok {
				d = string([]byte{b})
				if t.byteID[b] < 0 {
					t.byteID[b] = id
				}
			}
		default:
			switch t.kind {
			case kindBPE:
				d = byteLevelDecode(p)
			default:
				d = strings.ReplaceAll(p, spaceMarker, " ")
			}
		}
		t.decoded[id] = d
		if t.types[id] != TypeControl && t.types[id] != TypeUnknown {
			t.stream[id] = d
		}
		t.streamWhole[id] = completePrefix([]byte(t.stream[id])) == len(t.stream[id])
	}
	if t.kind == kindSPM {
		t.buildSPMPairs()
	}
	for id, p := range t.pieces {
		switch t.types[id] {
		case TypeControl, TypeUserDefined, TypeUnknown:
			if p == "" {
				continue
			}
			t.specials[p[0]] = append(t.specials[p[0]], specialToken{text: p, id: id, always: t.types[id] == TypeUserDefined})
		}
	}
	for i := range t.specials {
		slices.SortStableFunc(t.specials[i], func(a, b specialToken) int { return len(b.text) - len(a.text) })
	}
	stop := make([]int, 0, 4)
	if t.eos >= 0 {
		stop = append(stop, t.eos)
	}
	for _, s := range endOfGeneration {
		if id, ok := t.ID(s); ok && t.types[id] != TypeNormal && t.types[id] != TypeUndefined {
			stop = append(stop, id)
		}
	}
	stop = append(stop, t.stop...)
	slices.Sort(stop)
	t.stop = slices.Compact(stop)
}

// specialID finds a control or user-defined token by its text.
func (t *Tokenizer) specialID(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for _, sp := range t.specials[s[0]] {
		if sp.text == s {
			return sp.id, true
		}
	}
	return 0, false
}

func parseByteToken(p string) (byte, bool) {
	if len(p) != 6 || p[0] != '<' || p[1] != '0' || (p[2] != 'x' && p[2] != 'X') || p[5] != '>' {
		return 0, false
	}
	hi, ok1 := hexVal(p[3])
	lo, ok2 := hexVal(p[4])
	return hi<<4 | lo, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// VocabSize is the number of token ids.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// BOS is the beginning-of-sequence id, -1 when the vocabulary has none.
func (t *Tokenizer) BOS() int { return t.bos }

// EOS is the end-of-sequence id, -1 when the vocabulary has none.
func (t *Tokenizer) EOS() int { return t.eos }

// AddBOS reports whether a prompt is encoded with BOS in front.
func (t *Tokenizer) AddBOS() bool { return t.addBOS && t.bos >= 0 }

// WithBOS returns a prompt's ids with BOS in front when the tokenizer asks
// for it (AddBOS) and they do not begin with it already (a template or a
// text that wrote it). It is the one place every prompt gets its BOS:
// chat and legacy completions, tokenize, training and kiln generate.
func (t *Tokenizer) WithBOS(ids []int) []int {
	if !t.AddBOS() || (len(ids) > 0 && ids[0] == t.bos) {
		return ids
	}
	return append([]int{t.bos}, ids...)
}

// StopIDs lists the ids that end generation: EOS, EOT and the end-of-turn
// markers of common chat formats present in the vocabulary. The caller must
// not modify the slice.
func (t *Tokenizer) StopIDs() []int { return t.stop }

// IsSpecial reports whether id is a control or unknown token: one that
// streams as no text.
func (t *Tokenizer) IsSpecial(id int) bool {
	if id < 0 || id >= len(t.types) {
		return false
	}
	switch t.types[id] {
	case TypeControl, TypeUnknown, TypeUnused:
		return true
	}
	return false
}

// Type is the role of id in the vocabulary (TypeUndefined out of range).
func (t *Tokenizer) Type(id int) TokenType {
	if id < 0 || id >= len(t.types) {
		return TypeUndefined
	}
	return t.types[id]
}

// Token is the raw vocabulary piece of id ("" out of range).
func (t *Tokenizer) Token(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// ID finds a piece in the vocabulary.
func (t *Tokenizer) ID(piece string) (int, bool) {
	if id, ok := t.ids[piece]; ok {
		return id, true
	}
	return t.specialID(piece)
}

// ChatTemplate is the chat template the tokenizer data carried
// (tokenizer.chat_template), "" when none.
func (t *Tokenizer) ChatTemplate() string { return t.chatTemplate }

// Encode tokenizes plain text. Control-token text such as "<|im_start|>" is
// tokenized as ordinary text; user-defined tokens (Hugging Face added tokens
// that are not special) still match whole, as in the reference
// implementations. No BOS is added.
func (t *Tokenizer) Encode(text string) []int { return t.encode(text, false, nil) }

// EncodeSpecial tokenizes text in which special and control token strings
// stand for their tokens (a rendered chat template). At each position the
// longest special token that matches wins. No BOS is added.
func (t *Tokenizer) EncodeSpecial(text string) []int { return t.encode(text, true, nil) }

func (t *Tokenizer) encode(text string, special bool, plain []Span) []int {
	out := make([]int, 0, len(text)/3+1)
	if text == "" {
		return out
	}
	st := scratchPool.Get().(*scratch)
	defer scratchPool.Put(st)
	afterSpecial := true
	start := 0
	for i := 0; i < len(text); i++ {
		cands := t.specials[text[i]]
		if len(cands) == 0 {
			continue
		}
		for len(plain) > 0 && plain[0].End <= i {
			plain = plain[1:]
		}
		for _, sp := range cands {
			if (!special && !sp.always) || len(text)-i < len(sp.text) || text[i:i+len(sp.text)] != sp.text {
				continue
			}
			if !sp.always && len(plain) > 0 && plain[0].Start < i+len(sp.text) {
				continue // overlaps a plain span: text there is never a control token
			}
			if start < i {
				out = t.encodeText(out, text[start:i], afterSpecial, st)
			}
			out = append(out, sp.id)
			afterSpecial = true
			i += len(sp.text) - 1
			start = i + 1
			break
		}
	}
	if start < len(text) {
		out = t.encodeText(out, text[start:], afterSpecial, st)
	}
	return out
}

// encodeText tokenizes a fragment that holds no special token.
func (t *Tokenizer) encodeText(out []int, s string, afterSpecial bool, st *scratch) []int {
	switch t.kind {
	case kindBPE:
		if t.nfc && !norm.NFC.IsNormalString(s) {
			s = norm.NFC.String(s)
		}
		if t.prefixSpace && s != "" && s[0] != ' ' {
			s = " " + s
		}
		st.ends = t.split.split(s, st.ends[:0])
		prev := 0
		for _, end := range st.ends {
			out = t.bpeWord(out, s[prev:end], st)
			prev = end
		}
		return out
	default:
		st.text = st.text[:0]
		if t.addSpacePrefix && afterSpecial {
			st.text = append(st.text, spaceMarker...)
		}
		for i := 0; i < len(s); i++ {
			if s[i] == ' ' {
				st.text = append(st.text, spaceMarker...)
			} else {
				st.text = append(st.text, s[i])
			}
		}
		if t.kind == kindWords {
			return t.wordsEncode(out, st.text)
		}
		return t.spmEncode(out, st.text, st)
	}
}

// appendBytes appends the byte-fallback tokens of b (unknown when the
// vocabulary lacks a byte piece).
func (t *Tokenizer) appendBytes(out []int, b []byte) []int {
	for _, c := range b {
		switch {
		case t.byteID[c] >= 0:
			out = append(out, t.byteID[c])
		case t.unk >= 0:
			out = append(out, t.unk)
		}
	}
	return out
}

// encodable reports whether text segmentation may produce id.
func (t *Tokenizer) encodable(id int) bool {
	switch t.types[id] {
	case TypeNormal, TypeUndefined, TypeUserDefined:
		return true
	}
	return false
}

// scratch holds the buffers one Encode call reuses.
type scratch struct {
	text []byte
	ends []int
	syms []symbol
	spmQ spmQueue
	bpeQ bpeQueue
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// completePrefix is the length of the longest prefix of s that does not end
// inside an incomplete (but so far valid) UTF-8 sequence.
func completePrefix(s []byte) int {
	n := len(s)
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax+1; i-- {
		c := s[i]
		if c < utf8.RuneSelf {
			return n
		}
		if c&0xC0 == 0x80 {
			continue // continuation byte
		}
		if !utf8.FullRune(s[i:]) {
			return i
		}
		return n
	}
	return n
}
