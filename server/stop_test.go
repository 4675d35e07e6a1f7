package server

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStopMatcher(t *testing.T) {
	tests := []struct {
		name      string
		stops     []string
		pieces    []string
		wantOut   []string // per piece
		wantStop  int      // index of the piece that stops, -1 for none
		wantFlush string
	}{
		{"no stops", nil, []string{"a", "b"}, []string{"a", "b"}, -1, ""},
		{"inside one piece", []string{"END"}, []string{"abENDcd"}, []string{"ab"}, 0, ""},
		{"across pieces", []string{"END"}, []string{"xE", "N", "Dy"}, []string{"x", "", ""}, 2, ""},
		{"false prefix released", []string{"END"}, []string{"xE", "Nz"}, []string{"x", "ENz"}, -1, ""},
		{"held tail flushed", []string{"END"}, []string{"abEN"}, []string{"ab"}, -1, "EN"},
		{"earliest of several", []string{"cd", "b"}, []string{"abcd"}, []string{"a"}, 0, ""},
		{"stop at start", []string{"x"}, []string{"xyz"}, []string{""}, 0, ""},
		{"overlapping prefixes", []string{"aab"}, []string{"a", "a", "a", "b"}, []string{"", "", "a", ""}, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := stopMatcher{stops: tt.stops}
			var outs []string
			stopped := -1
			for i, p := range tt.pieces {
				out, hit := m.push(p)
				outs = append(outs, out)
				if hit {
					stopped = i
					break
				}
			}
			if diff := cmp.Diff(tt.wantOut, outs); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
			if stopped != tt.wantStop {
				t.Errorf("stopped at %d, want %d", stopped, tt.wantStop)
			}
			if got := m.flush(); got != tt.wantFlush {
				t.Errorf("flush = %q, want %q", got, tt.wantFlush)
			}
		})
	}
}

// FuzzStopMatcher: streaming through the matcher in arbitrary pieces gives
// exactly the text before the first occurrence of any stop sequence (or all
// of it), whatever the split.
func FuzzStopMatcher(f *testing.F) {
	f.Add("hello END world", "END", "lo", uint8(3))
	f.Add("aaab", "aab", "", uint8(1))
	f.Fuzz(func(t *testing.T, text, stop1, stop2 string, step uint8) {
		var stops []string
		for _, s := range []string{stop1, stop2} {
			if s != "" {
				stops = append(stops, s)
			}
		}
		want, cut := text, false
		first := -1
		for _, s := range stops {
			if i := strings.Index(text, s); i >= 0 && (first < 0 || i < first) {
				first = i
			}
		}
		if first >= 0 {
			want, cut = text[:first], true
		}
		n := int(step%7) + 1
		m := stopMatcher{stops: stops}
		var got strings.Builder
		hit := false
		for i := 0; i < len(text) && !hit; i += n {
			out, h := m.push(text[i:min(i+n, len(text))])
			got.WriteString(out)
			hit = h
		}
		if !hit {
			got.WriteString(m.flush())
		}
		if hit != cut || got.String() != want {
			t.Fatalf("text %q stops %q step %d: got %q (stopped %v), want %q (stopped %v)", text, stops, n, got.String(), hit, want, cut)
		}
	})
}
