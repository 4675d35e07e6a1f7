package testshared

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPath(t *testing.T) {
	if _, err := Path("no-such-folder-in-shared"); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("Path of a missing folder: err = %v, want an 'absent' error", err)
	}
	p, err := Path()
	if err != nil {
		t.Skipf("no ../shared here: %v", err)
	}
	if filepath.Base(p) != "shared" {
		t.Errorf("Path() = %s, want a folder named shared", p)
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Errorf("Path() = %s is not a directory: %v", p, err)
	}
	wd, _ := os.Getwd()
	if !strings.HasPrefix(wd, filepath.Dir(p)) {
		t.Errorf("Path() = %s does not sit beside an ancestor of %s", p, wd)
	}
}

func TestRequireSkipsWhenAbsent(t *testing.T) {
	t.Setenv("CI", "") // under CI, Require fails instead (where ../shared is always present)
	var skipped bool
	t.Run("missing", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Require(t, "no-such-folder-in-shared")
		t.Error("Require returned for missing data")
	})
	if !skipped {
		t.Error("Require did not skip the test for missing data")
	}
}
