package kernels_test

import (
	"fmt"

	"github.com/kiln-ai/kiln/kernels"
)

// One token of a head with a 2 x 2 state: from an empty state the output
// is beta*v along the key, read back by a query equal to the key.
func ExampleDeltaChunk() {
	const dk, dv, n = 2, 2, 1
	S := make([]float32, dk*dv)
	q, k, v := []float32{1, 0}, []float32{1, 0}, []float32{2, 4}
	g, beta := []float32{0}, []float32{0.5}
	out := make([]float32, n*dv)
	kernels.DeltaChunk(S, dk, dv, n, q, k, v, g, beta, out, make([]float32, kernels.DeltaChunkScratch(n, dk, dv)))
	fmt.Println(out, S)
	// Output: [1 2] [1 2 0 0]
}

// The same token through DeltaStep: u = beta*(v - S^T k) is written along
// k, and q = k reads it back.
func ExampleDeltaStep() {
	S := make([]float32, 2*2)
	out := make([]float32, 2)
	kernels.DeltaStep(S, 2, 2, []float32{1, 0}, []float32{1, 0}, []float32{2, 4}, 0, 0.5, out)
	fmt.Println(out, S)
	// Output: [1 2] [1 2 0 0]
}
