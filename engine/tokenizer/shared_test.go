package tokenizer

import (
	"testing"

	"github.com/kiln-ai/kiln/internal/testshared"
)

// sharedDir returns ../shared/<rel> beside the module root, skipping the
// test when that reference data is absent.
func sharedDir(t testing.TB, rel string) string {
	t.Helper()
	return testshared.Require(t, rel)
}

// sharedPath is sharedDir without skipping: "" when the data is absent.
func sharedPath(rel string) string {
	p, err := testshared.Path(rel)
	if err != nil {
		return ""
	}
	return p
}
