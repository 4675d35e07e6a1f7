package tokenizer

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnglishLayout(t *testing.T) {
	tok := English()
	if tok != English() {
		t.Error("English() must return the same tokenizer")
	}
	type layout struct {
		Unk, BOS, EOS        string
		BOSID, EOSID         int
		AddBOS               bool
		Stop                 []int
		Byte0, ByteFF, Space string
	}
	want := layout{"<unk>", "<s>", "</s>", 1, 2, true, []int{2, tok.VocabSize() - 1}, "<0x00>", "<0xFF>", "▁"}
	got := layout{tok.Token(0), tok.Token(1), tok.Token(2), tok.BOS(), tok.EOS(), tok.AddBOS(), tok.StopIDs(), tok.Token(3), tok.Token(258), tok.Token(259)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if n := tok.VocabSize(); n < 20000 || n > 40000 {
		t.Errorf("VocabSize = %d, want a real-word vocabulary of 20k-40k", n)
	}
	words := 0
	for id := range tok.VocabSize() {
		p := tok.Token(id)
		if len(p) > len("▁xx") && strings.HasPrefix(p, "▁") && strings.Trim(p[len("▁"):], "abcdefghijklmnopqrstuvwxyz") == "" {
			words++
		}
	}
	if words < tok.VocabSize()*9/10 {
		t.Errorf("only %d of %d pieces are words", words, tok.VocabSize())
	}
}

func TestEnglishSegmentation(t *testing.T) {
	tok := English()
	tests := []struct {
		in   string
		want []string
	}{
		{"the quick brown fox", []string{"▁the", "▁quick", "▁brown", "▁fox"}},
		{"Hello, world!", []string{"▁H", "e", "l", "l", "o", ",", "▁world", "!"}},
		{"café", []string{"▁c", "a", "f", "<0xC3>", "<0xA9>"}},
		{"a\nb", []string{"▁a", "<0x0A>", "b"}},
		{"", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			ids := tok.Encode(tt.in)
			if diff := cmp.Diff(tt.want, pieces(tok, ids)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if got := tok.Decode(ids); got != tt.in {
				t.Errorf("Decode = %q", got)
			}
		})
	}
	if diff := cmp.Diff([]string{"<s>", "▁hi", "</s>"}, pieces(tok, tok.EncodeSpecial("<s>hi</s>"))); diff != "" {
		t.Errorf("EncodeSpecial mismatch (-want +got):\n%s", diff)
	}
}

func TestEnglishChatMLMarkers(t *testing.T) {
	tok := English()
	start, ok1 := tok.ID("<|im_start|>")
	end, ok2 := tok.ID("<|im_end|>")
	if !ok1 || !ok2 {
		t.Fatal("English lacks the ChatML markers")
	}
	if tok.Type(start) != TypeControl || tok.Type(end) != TypeControl {
		t.Errorf("marker types %v %v, want control", tok.Type(start), tok.Type(end))
	}
	got := tok.EncodeSpecial("<|im_start|>user\nhello<|im_end|>\n")
	if got[0] != start || !slices.Contains(got, end) {
		t.Errorf("EncodeSpecial = %v, want the markers as single tokens %d and %d", got, start, end)
	}
	if slices.Contains(tok.Encode("<|im_start|>"), start) {
		t.Error("plain Encode produced a control token from text")
	}
	if !slices.Contains(tok.StopIDs(), end) {
		t.Errorf("StopIDs %v lacks <|im_end|> (%d)", tok.StopIDs(), end)
	}
	d := tok.NewDecoder()
	if s := d.Next(end); s != "" {
		t.Errorf("streaming decode of <|im_end|> = %q, want empty", s)
	}
}
