package tokenizer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecoderHoldsIncompleteUTF8(t *testing.T) {
	tok := spmTokenizer(t, []vocabEntry{{"▁", -1, TypeNormal}, {"a", -1, TypeNormal}, {"<|im_end|>", 0, TypeControl}, {"<x>", 0, TypeUserDefined}}, true)
	id := func(p string) int {
		i, ok := tok.ID(p)
		if !ok {
			t.Fatalf("no piece %q", p)
		}
		return i
	}
	// "é" is C3 A9, "😀" is F0 9F 98 80.
	ids := []int{id("▁"), id("<0xC3>"), id("<|im_end|>"), id("<0xA9>"), id("a"), id("<0xF0>"), id("<0x9F>"), id("<0x98>"), id("<0x80>"), id("<x>"), id("<0xF0>")}
	want := []string{" ", "", "", "é", "a", "", "", "", "😀", "<x>", ""}
	d := tok.NewDecoder()
	var got []string
	for _, i := range ids {
		got = append(got, d.Next(i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Next mismatch (-want +got):\n%s", diff)
	}
	if f := d.Flush(); f != "\xf0" {
		t.Errorf("Flush() = %q, want the held-back lead byte", f)
	}
	if f := d.Flush(); f != "" {
		t.Errorf("second Flush() = %q, want empty", f)
	}
	// An invalid sequence is passed through rather than held forever.
	if got := d.Next(id("<0xA9>")); got != "\xa9" {
		t.Errorf("Next(stray continuation) = %q", got)
	}
	if got := d.Next(-5); got != "" {
		t.Errorf("Next(out of range) = %q", got)
	}
}

func TestDecoderMatchesDecode(t *testing.T) {
	tok := English()
	text := "The naïve café served 3 crêpes — and a 🎉 emoji!\nNew line."
	ids := tok.Encode(text)
	d := tok.NewDecoder()
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(d.Next(id))
	}
	b.WriteString(d.Flush())
	// The stream keeps the SentencePiece prefix space that Decode drops.
	if got := b.String(); got != " "+text {
		t.Errorf("streamed %q, want %q", got, " "+text)
	}
	if got := tok.Decode(ids); got != text {
		t.Errorf("Decode = %q, want %q", got, text)
	}
}

func TestDecodeSkipsInvalidIDs(t *testing.T) {
	tok := English()
	ids := tok.Encode("hello world")
	got := tok.Decode(append([]int{-1, 1 << 30}, ids...))
	if got != "hello world" {
		t.Errorf("Decode = %q", got)
	}
}

func TestCompletePrefix(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"a\xc3", 1}, {"a\xc3\xa9", 3}, {"\xf0\x9f\x98", 0}, {"\xf0\x9f\x98\x80", 4},
		{"\xa9", 1}, {"a\xff", 2}, {"\xe2\x82", 0}, {"x\xe2", 1},
	}
	for _, tt := range tests {
		if got := completePrefix([]byte(tt.in)); got != tt.want {
			t.Errorf("completePrefix(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
