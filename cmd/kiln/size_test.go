package main

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "0", want: 0},
		{in: "4096", want: 4096},
		{in: "512MiB", want: 512 << 20},
		{in: "512mib", want: 512 << 20},
		{in: "2 GiB", want: 2 << 30},
		{in: " 1TiB ", want: 1 << 40},
		{in: "1.5KiB", want: 1536},
		{in: "1.5GB", want: 1_500_000_000},
		{in: "1.1GB", want: 1_100_000_000}, // exact: not float arithmetic
		{in: "64kB", want: 64_000},
		{in: "10B", want: 10},
		{in: "8EiB", wantErr: "not a size"}, // not a unit we take
		{in: "8388608TiB", wantErr: "64 bits"},
		{in: "9223372036854775808", wantErr: "64 bits"},
		{in: "512m", wantErr: "not a size"},
		{in: "2G", wantErr: "not a size"},
		{in: "0.5B", wantErr: "whole number of bytes"},
		{in: "-1", wantErr: "not a size"},
		{in: "", wantErr: "not a size"},
		{in: "MiB", wantErr: "not a size"},
		{in: ".5MiB", wantErr: "not a size"},
		{in: "5.MiB", wantErr: "not a size"},
		{in: "1.2.3MB", wantErr: "not a size"},
		{in: "1e9", wantErr: "not a size"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseByteSize(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), strconv.Quote(tt.in)) {
					t.Fatalf("parseByteSize(%q) = %d, %v; want an error quoting it and saying %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseByteSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

// FuzzParseByteSize: whatever parses is a size in bytes (not negative)
// that reads back the same written as plain bytes and in each binary unit
// it divides into.
func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"0", "4096", "512MiB", "1.5GB", "2 gib", "0.5B", "9223372036854775807", "8EiB", "-1", "1..2kB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseByteSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("parseByteSize(%q) = %d, negative", s, n)
		}
		if back, err := parseByteSize(strconv.FormatInt(n, 10)); err != nil || back != n {
			t.Fatalf("parseByteSize(%q) = %d, but %d reads back as %d, %v", s, n, n, back, err)
		}
		for unit, shift := range map[string]uint{"KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40} {
			if n%(1<<shift) != 0 {
				continue
			}
			w := strconv.FormatInt(n>>shift, 10) + unit
			if back, err := parseByteSize(w); err != nil || back != n {
				t.Fatalf("parseByteSize(%q) = %d, but %q reads back as %d, %v", s, n, w, back, err)
			}
		}
	})
}
