package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func loadQwen3(t testing.TB) *Tokenizer {
	t.Helper()
	dir := sharedDir(t, "tokenizers/qwen3")
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := FromHuggingFace(data)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestQwen3Golden(t *testing.T) {
	tok := loadQwen3(t)
	data, err := os.ReadFile(filepath.Join(sharedDir(t, "tokenizers/qwen3"), "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []struct {
			Text string `json:"text"`
			IDs  []int  `json:"ids"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) < 30 {
		t.Fatalf("only %d golden cases", len(golden.Cases))
	}
	for i, c := range golden.Cases {
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			got := tok.EncodeSpecial(c.Text)
			if diff := cmp.Diff(c.IDs, got); diff != "" {
				t.Errorf("EncodeSpecial(%q) mismatch (-want +got):\n%s", c.Text, diff)
			}
			if back := tok.Decode(c.IDs); back != c.Text {
				t.Errorf("Decode(golden ids of %q) = %q", c.Text, back)
			}
		})
	}
}

func TestQwen3Specials(t *testing.T) {
	tok := loadQwen3(t)
	type meta struct {
		BOS, EOS int
		AddBOS   bool
		Stop     []int
		ImEnd    bool // <|im_end|> is special
		Think    bool // <think> is not
	}
	want := meta{-1, 151643, false, []int{151643, 151645}, true, false}
	got := meta{tok.BOS(), tok.EOS(), tok.AddBOS(), tok.StopIDs(), tok.IsSpecial(151645), tok.IsSpecial(151667)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	// Plain Encode does not parse control tokens but does match <think>.
	if ids := tok.Encode("<|im_end|><think>"); slices.Contains(ids, 151645) || !slices.Contains(ids, 151667) {
		t.Errorf("Encode(<|im_end|><think>) = %v", ids)
	}
	d := tok.NewDecoder()
	if s := d.Next(151645); s != "" {
		t.Errorf("streamed <|im_end|> as %q, want no text", s)
	}
}
