package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDescribeGolden(t *testing.T) {
	w := sampleWriter()
	w.SetString("general.description", "a description longer than sixty-four bytes, so that Describe cuts it short")
	w.Set("general.tags", mustValue(t, []Value{mustValue(t, []uint8{1, 2}), mustValue(t, []string{"x"})}))
	w.SetInt32s("many", []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f, err := Parse(encode(t, w))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := f.Describe(&got); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "describe.golden")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		name string
		v    Value
		want string
	}{
		{"uint", mustValue(t, uint32(7)), "7"},
		{"float", mustValue(t, float32(0.5)), "0.5"},
		{"bool", mustValue(t, true), "true"},
		{"string", mustValue(t, "a\"b\n"), `"a\"b\n"`},
		{"long multibyte string", mustValue(t, "x"+string(bytes.Repeat([]byte("é"), 40))+"y"), `"xééééééééééééééééééééééééééééééé"... (82 bytes)`},
		{"short array", mustValue(t, []int32{-1, 2}), "[-1, 2]"},
		{"long array", mustValue(t, []uint8{1, 2, 3, 4}), "[1, 2, ... (2 more)]"},
		{"strings", mustValue(t, []string{"a", "b", "c"}), `["a", "b", ... (1 more)]`},
		{"nested", mustValue(t, []Value{mustValue(t, []bool{true})}), "[[true]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, FormatValue(tt.v, 2)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
