package mmap

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errShort = errors.New("short")

func TestMap(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	want := []byte("GGUF and then some bytes")
	if err := os.WriteFile(p, want, 0o600); err != nil {
		t.Fatal(err)
	}
	data, unmap, err := Map(p, 4, errShort)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("mapped %q, want %q", data, want)
	}
	if err := unmap(); err != nil {
		t.Errorf("unmap: %v", err)
	}
	if _, _, err := Map(p, int64(len(want)+1), errShort); !errors.Is(err, errShort) {
		t.Errorf("a file below the minimum size: err %v, want it to wrap %v", err, errShort)
	}
	if _, _, err := Map(filepath.Join(dir, "absent"), 0, errShort); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: err %v, want os.ErrNotExist", err)
	}
}
