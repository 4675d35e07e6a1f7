package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkQuantMatMul measures every quantized type's product on a
// 4096x4096 matrix (a 7B-class projection) through Pool.MatMul, with one
// activation row (decode) and eight (a batched step or a prefill chunk),
// on one and two workers. MB/s counts weight bytes (read once per call);
// GFLOP/s counts 2*rows*cols*batch.
func BenchmarkQuantMatMul(b *testing.B) {
	for _, typ := range []DType{Q8_0, Q4_K, Q6_K, Q4_0, Q5_K, Q5_0, Q4_1, Q5_1, Q2_K, Q3_K} {
		for _, batch := range []int{1, 8} {
			for _, workers := range []int{1, 2} {
				b.Run(fmt.Sprintf("%v/4096x4096/b%d/w%d", typ, batch, workers), func(b *testing.B) {
					benchMatMul(b, typ, 4096, 4096, batch, workers, false)
				})
			}
		}
	}
}
