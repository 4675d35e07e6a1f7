package mmap

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReleaseDropsResidentPages maps 32 MiB, reads them all (resident),
// releases all but the edges of the slice, and checks that the process's
// resident set shrank by most of them while the contents read back the
// same from the page cache.
func TestReleaseDropsResidentPages(t *testing.T) {
	const size = 32 << 20
	want := bytes.Repeat([]byte("kiln weights 0123456789abcdef\n"), size/30+1)[:size]
	p := filepath.Join(t.TempDir(), "w")
	if err := os.WriteFile(p, want, 0o600); err != nil {
		t.Fatal(err)
	}
	data, unmap, err := Map(p, 0, errShort)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unmap() }()
	if !bytes.Equal(data, want) { // touches every page
		t.Fatal("mapped data differs from the file")
	}
	before := residentBytes(t)
	if err := Release(data[100 : size-100]); err != nil {
		t.Fatalf("Release: %v", err)
	}
	after := residentBytes(t)
	if drop := before - after; drop < size/2 {
		t.Errorf("resident set %d -> %d bytes: dropped %d, want most of the %d released", before, after, drop, size)
	}
	if !bytes.Equal(data, want) {
		t.Error("data read after Release differs from the file")
	}
	if err := Release(nil); err != nil {
		t.Errorf("Release(nil): %v", err)
	}
	if err := Release(data[1:10]); err != nil { // no whole page: nothing to do
		t.Errorf("Release of a partial page: %v", err)
	}
}

// residentBytes is the process's resident set from /proc/self/statm.
func residentBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}
