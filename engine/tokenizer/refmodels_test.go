package tokenizer

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/internal/testshared"
)

func readRefGroups(t testing.TB) (dir string, groups []testshared.RefTokGroup) {
	t.Helper()
	dir, golden := testshared.LoadRefGolden(t)
	if len(golden.Tokenizer) < 2 {
		t.Fatalf("golden.json has %d tokenizer groups, want llama-bpe and qwen2", len(golden.Tokenizer))
	}
	return dir, golden.Tokenizer
}

func TestRefModelsTokenizers(t *testing.T) {
	dir, groups := readRefGroups(t)
	for _, g := range groups {
		if len(g.Files) == 0 || len(g.HFDirs) == 0 || len(g.Cases) < 10 {
			t.Fatalf("group %q: %d files, %d HF dirs, %d cases", g.Pre, len(g.Files), len(g.HFDirs), len(g.Cases))
		}
		toks := map[string]*Tokenizer{}
		for _, f := range g.Files {
			toks[f] = openGGUFTokenizer(t, filepath.Join(dir, f))
		}
		for _, d := range g.HFDirs {
			tok, _, err := FromHFDir(filepath.Join(dir, d))
			if err != nil {
				t.Fatalf("FromHFDir(%s): %v", d, err)
			}
			toks[d] = tok
		}
		for name, tok := range toks {
			t.Run(g.Pre+"/"+name, func(t *testing.T) {
				for _, c := range g.Cases {
					if diff := cmp.Diff(c.IDs, tok.EncodeSpecial(c.Text)); diff != "" {
						t.Errorf("EncodeSpecial(%q) (-want +got):\n%s", c.Text, diff)
					}
					if diff := cmp.Diff(c.Detok, tok.Detokenize(c.IDs)); diff != "" {
						t.Errorf("Detokenize(ids of %q) (-want +got):\n%s", c.Text, diff)
					}
				}
			})
		}
	}
}
