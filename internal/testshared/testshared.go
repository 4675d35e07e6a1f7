package testshared

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Path returns ../shared/<rel...> relative to the module root (the nearest
// directory above the working directory that holds go.mod), or an error
// saying why it is not there.
func Path(rel ...string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test directory; cannot locate ../shared")
		}
		dir = parent
	}
	p := filepath.Join(append([]string{dir, "..", "shared"}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("reference data %s absent: %w", p, err)
	}
	return p, nil
}

// Require returns Path(rel...) or skips tb, saying what is missing: the
// shared reference data comes with the project's CI, not with every
// checkout. Where CI is set it fails instead, as a missing end-to-end tool
// does: there the data is always present.
func Require(tb testing.TB, rel ...string) string {
	tb.Helper()
	p, err := Path(rel...)
	if err != nil && os.Getenv("CI") != "" {
		tb.Fatalf("%v (CI is set, where ../shared is always present)", err)
	}
	if err != nil {
		tb.Skipf("%v (../shared comes with the project's shared data; CI always has it)", err)
	}
	return p
}
