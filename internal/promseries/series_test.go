package promseries

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const exposition = `# TYPE kiln_token_itl_seconds histogram
kiln_token_itl_seconds_bucket{le="0.25"} 2
kiln_token_itl_seconds_bucket{le="1"} 3
kiln_token_itl_seconds_bucket{le="+Inf"} 4
kiln_token_itl_seconds_sum 7.5
kiln_token_itl_seconds_count 4
# TYPE kiln_token_stalls_total counter
kiln_token_stalls_total{job="gw",reason="actor_prefill"} 1
# TYPE other_total counter
other_total 9
`

func TestParse(t *testing.T) {
	got, err := Parse(strings.NewReader(exposition),
		func(f string) bool { return strings.HasPrefix(f, "kiln_") },
		func(l string) bool { return l == "job" })
	if err != nil {
		t.Fatal(err)
	}
	want := Series{
		`kiln_token_itl_seconds_bucket{le="0.25"}`:        2,
		`kiln_token_itl_seconds_bucket{le="1"}`:           3,
		`kiln_token_itl_seconds_bucket{le="+Inf"}`:        4,
		`kiln_token_itl_seconds_sum{}`:                    7.5,
		`kiln_token_itl_seconds_count{}`:                  4,
		`kiln_token_stalls_total{reason="actor_prefill"}`: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

func TestDiff(t *testing.T) {
	base := Series{`a_bucket{le="1"}`: 2, `a_sum{}`: 1.5, `c_total{}`: 3}
	tests := []struct {
		name string
		got  Series
		want []string
	}{
		{"equal", Series{`a_bucket{le="1"}`: 2, `a_sum{}`: 1.5, `c_total{}`: 3}, nil},
		{"sum within rounding", Series{`a_bucket{le="1"}`: 2, `a_sum{}`: 1.5 + 1e-15, `c_total{}`: 3}, nil},
		{"sum off", Series{`a_bucket{le="1"}`: 2, `a_sum{}`: 1.6, `c_total{}`: 3}, []string{`a_sum{} = 1.6, want 1.5`}},
		{"moved bucket bound", Series{`a_bucket{le="2"}`: 2, `a_sum{}`: 1.5, `c_total{}`: 3},
			[]string{`missing a_bucket{le="1"} (want 2)`, `unexpected a_bucket{le="2"} = 2`}},
		{"count off", Series{`a_bucket{le="1"}`: 2, `a_sum{}`: 1.5, `c_total{}`: 4}, []string{`c_total{} = 4, want 3`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Diff(base, tc.got)); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAdd(t *testing.T) {
	got := Add(Series{"a{}": 1, "b{}": 2}, Series{"a{}": 3, "c{}": 4})
	if diff := cmp.Diff(Series{"a{}": 4, "b{}": 2, "c{}": 4}, got); diff != "" {
		t.Errorf("Add (-want +got):\n%s", diff)
	}
}
