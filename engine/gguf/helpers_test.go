package gguf

import (
	"github.com/kiln-ai/kiln/internal/testshared"

	"bytes"
	"testing"
)

// sharedDir is ../shared beside the module root, or skips the test when it
// is absent.
func sharedDir(t testing.TB) string {
	t.Helper()
	return testshared.Require(t)
}

// mustValue is ValueOf for tests.
func mustValue(t testing.TB, x any) Value {
	t.Helper()
	v, err := ValueOf(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// encode writes w into memory.
func encode(t testing.TB, w *Writer) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}
