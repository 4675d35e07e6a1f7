package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kiln-ai/kiln/engine/gguf"
)

// vocabEntry is one piece of a test vocabulary.
type vocabEntry struct {
	piece string
	score float32
	typ   TokenType
}

// byteEntries are the 256 SentencePiece byte-fallback pieces.
func byteEntries() []vocabEntry {
	out := make([]vocabEntry, 256)
	for b := range out {
		out[b] = vocabEntry{piece: fmt.Sprintf("<0x%02X>", b), typ: TypeByte}
	}
	return out
}

// fromGGUFBytes round-trips a Writer through Parse and FromGGUF.
func fromGGUFBytes(t testing.TB, w *gguf.Writer) (*Tokenizer, error) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return FromGGUF(f)
}

// spmWriter writes a "llama" vocabulary: <unk>, <s>, </s>, the byte pieces,
// then entries.
func spmWriter(entries []vocabEntry, addSpacePrefix bool) *gguf.Writer {
	all := append([]vocabEntry{{"<unk>", 0, TypeUnknown}, {"<s>", 0, TypeControl}, {"</s>", 0, TypeControl}}, byteEntries()...)
	all = append(all, entries...)
	w := gguf.NewWriter()
	w.SetString(keyModel, "llama")
	var pieces []string
	var scores []float32
	var types []int32
	for _, e := range all {
		pieces = append(pieces, e.piece)
		scores = append(scores, e.score)
		types = append(types, int32(e.typ))
	}
	w.SetStrings(keyTokens, pieces)
	w.SetFloat32s(keyScores, scores)
	w.SetInt32s(keyTokenType, types)
	w.SetUint32(keyUNK, 0)
	w.SetUint32(keyBOS, 1)
	w.SetUint32(keyEOS, 2)
	w.SetBool(keyAddSpacePrefix, addSpacePrefix)
	return w
}

func spmTokenizer(t testing.TB, entries []vocabEntry, addSpacePrefix bool) *Tokenizer {
	t.Helper()
	tok, err := fromGGUFBytes(t, spmWriter(entries, addSpacePrefix))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// bpeVocab is a byte-level vocabulary: the 256 byte symbols in byte order
// (ids 0-255), then the merge results, then extra (special) pieces.
func bpeVocab(merges [][2]string, extra ...vocabEntry) ([]string, []int32) {
	var pieces []string
	var types []int32
	seen := map[string]bool{}
	add := func(p string, typ TokenType) {
		if !seen[p] {
			seen[p] = true
			pieces = append(pieces, p)
			types = append(types, int32(typ))
		}
	}
	for _, r := range byteRune {
		add(string(r), TypeNormal)
	}
	for _, m := range merges {
		add(m[0]+m[1], TypeNormal)
	}
	for _, e := range extra {
		add(e.piece, e.typ)
	}
	return pieces, types
}

func bpeTokenizer(t testing.TB, pre string, merges [][2]string, extra ...vocabEntry) *Tokenizer {
	t.Helper()
	pieces, types := bpeVocab(merges, extra...)
	w := gguf.NewWriter()
	w.SetString(keyModel, "gpt2")
	w.SetString(keyPre, pre)
	w.SetStrings(keyTokens, pieces)
	w.SetInt32s(keyTokenType, types)
	var ms []string
	for _, m := range merges {
		ms = append(ms, m[0]+" "+m[1])
	}
	w.SetStrings(keyMerges, ms)
	tok, err := fromGGUFBytes(t, w)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// hfJSON writes the same vocabulary as a Hugging Face tokenizer.json with
// the Qwen2 split; pairs selects the ["a","b"] merges serialisation.
func hfJSON(t testing.TB, merges [][2]string, added []hfAddedToken, pairs bool) []byte {
	t.Helper()
	pieces, _ := bpeVocab(merges)
	vocab := map[string]int{}
	for i, p := range pieces {
		vocab[p] = i
	}
	var ms any
	if pairs {
		ms = merges
	} else {
		var s []string
		for _, m := range merges {
			s = append(s, m[0]+" "+m[1])
		}
		ms = s
	}
	doc := map[string]any{
		"added_tokens": added,
		"normalizer":   map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": patternQwen2}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model":   map[string]any{"type": "BPE", "vocab": vocab, "merges": ms},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
