package ui

import (
	"strings"
	"testing"
)

// TestFile: the page and its modules come with their types; anything
// else, the package's own source and paths out of it included, does not.
func TestFile(t *testing.T) {
	for _, tt := range []struct{ name, ctype string }{
		{"", "text/html; charset=utf-8"},
		{"index.html", "text/html; charset=utf-8"},
		{"dashboard.js", "text/javascript; charset=utf-8"},
		{"diagnosis.js", "text/javascript; charset=utf-8"},
		{"dashboard.css", "text/css; charset=utf-8"},
	} {
		data, ctype, ok := File(tt.name)
		if !ok || ctype != tt.ctype || len(data) == 0 {
			t.Errorf("File(%q) = %d bytes, %q, %v; want %q", tt.name, len(data), ctype, ok, tt.ctype)
		}
	}
	if data, _, _ := File(""); !strings.Contains(string(data), "<html") {
		t.Errorf("index.html is not a page")
	}
	for _, name := range []string{"ui.go", "../ui.go", "../../go.mod", "nope.js", "/etc/passwd", "."} {
		if _, _, ok := File(name); ok {
			t.Errorf("File(%q) served", name)
		}
	}
}
