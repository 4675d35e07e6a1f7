package kernels_test

import (
	"fmt"

	"github.com/kiln-ai/kiln/kernels"
)

// A Pool spreads one product over its workers; MatMul takes a batch of
// activation rows at once so that each weight is read once for all of them.
func ExamplePool_MatMul() {
	p := kernels.NewPool(2)
	defer p.Close()
	w := &kernels.Matrix{Rows: 2, Cols: 3, Type: kernels.F32, F32: []float32{
		1, 2, 3,
		0, 1, 0,
	}}
	x := []float32{
		1, 1, 1, // batch row 0
		2, 0, 1, // batch row 1
	}
	out := make([]float32, 2*w.Rows)
	p.MatMul(out, w, x, 2)
	fmt.Println(out)
	// Output: [6 1 5 0]
}

// Q8_0 weights are quantized with QuantizeQ8 (or read from a GGUF file)
// and multiplied without expanding them in memory.
func ExampleQuantizeQ8() {
	vals := make([]float32, 32)
	for i := range vals {
		vals[i] = float32(i%4) - 1.5
	}
	w := &kernels.Matrix{Rows: 1, Cols: 32, Type: kernels.Q8_0, Raw: kernels.QuantizeQ8(nil, vals)}
	x := make([]float32, 32)
	x[3] = 2
	out := make([]float32, 1)
	p := kernels.NewPool(1)
	defer p.Close()
	p.MatMul(out, w, x, 1)
	fmt.Printf("%d bytes, w[3]*2 = %.2f\n", len(w.Raw), out[0])
	// Output: 34 bytes, w[3]*2 = 3.00
}
