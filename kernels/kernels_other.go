//go:build !amd64

package kernels

// On other architectures every product and vector op takes the pure-Go path.

func matMulRowsArch(out []float32, w *Matrix, x []float32, batch, lo, hi int) bool { return false }

func dotArch(a, b []float32) (float32, bool) { return 0, false }

func axpyArch(alpha float32, x, y []float32) bool { return false }
