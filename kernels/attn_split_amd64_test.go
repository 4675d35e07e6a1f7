//go:build amd64 && !purego

package kernels

import "testing"

// TestAttnValues4AddSplitsAVX2 runs the split check on the AVX2 kernel,
// which an avx512 machine otherwise never takes.
func TestAttnValues4AddSplitsAVX2(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no avx512: TestAttnValues4AddSplits already ran the AVX2 kernel")
	}
	haveAVX512 = false
	defer func() { haveAVX512 = true }()
	checkValues4Splits(t)
}
