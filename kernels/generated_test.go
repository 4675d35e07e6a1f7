package kernels

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/kiln-ai/kiln/kernels/internal/kerngen"
)

// TestGeneratedCallsCurrent fails when a committed file of kerngen's
// differs from what its spec gives, or is missing.
func TestGeneratedCallsCurrent(t *testing.T) {
	if stale := staleGenerated(); len(stale) > 0 {
		t.Fatalf("stale: %v; run go generate ./kernels/", stale)
	}
}

// staleGenerated names the generated files that differ from the spec's.
func staleGenerated() []string {
	files, err := kerngen.Generate()
	if err != nil {
		return []string{err.Error()}
	}
	var stale []string
	for name, want := range files {
		if got, _ := os.ReadFile(name); !bytes.Equal(got, want) {
			stale = append(stale, name)
		}
	}
	slices.Sort(stale)
	return stale
}
