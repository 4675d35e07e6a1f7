package kernels

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/kernels/internal/kerngen"
)

// TestGeneratedCallsCurrent fails when a committed file of kerngen's
// differs from what its spec gives: run go generate ./kernels/.
func TestGeneratedCallsCurrent(t *testing.T) {
	files, err := kerngen.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (run go generate ./kernels/)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s is stale, run go generate ./kernels/ (-want +got):\n%s", name, diff)
		}
	}
}
