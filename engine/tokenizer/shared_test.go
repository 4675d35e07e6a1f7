package tokenizer

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedDir returns ../shared/<rel> relative to the module root, skipping
// the test when that reference data is absent.
func sharedDir(t testing.TB, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the test directory; cannot locate ../shared")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("reference data %s absent (%v): skipping", p, err)
	}
	return p
}
