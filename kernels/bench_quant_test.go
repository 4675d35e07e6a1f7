package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
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

// BenchmarkIntVsFloat compares, call by call, the integer-dot product of
// each type (activation quantization included) with the float-activation
// product the engine ran before it, on the same kernel path, 4096x4096,
// one worker, batches of 1 and 8. Alternating the two within one loop
// makes a shared, noisy machine slow both alike; it reports each one's
// GFLOP/s and the speed-up.
func BenchmarkIntVsFloat(b *testing.B) {
	for _, path := range Paths() {
		for _, typ := range intTypes {
			for _, batch := range []int{1, 8} {
				b.Run(fmt.Sprintf("%s/%v/4096x4096/b%d", path, typ, batch), func(b *testing.B) {
					benchIntVsFloat(b, path, typ, batch)
				})
			}
		}
	}
}

func benchIntVsFloat(b *testing.B, path string, typ DType, batch int) {
	const n = 4096
	w := benchMatrix(b, typ, n, n)
	x := randVec(rand.New(rand.NewPCG(1, 1)), batch*n)
	out := make([]float32, batch*n)
	pi, err := NewPoolOpts(1, Options{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	defer pi.Close()
	pf, err := NewPoolOpts(1, Options{Path: path, FloatActivations: true})
	if err != nil {
		b.Fatal(err)
	}
	defer pf.Close()
	b.ReportAllocs()
	var ti, tf time.Duration
	for b.Loop() {
		t0 := time.Now()
		pi.MatMul(out, w, x, batch)
		t1 := time.Now()
		pf.MatMul(out, w, x, batch)
		tf += time.Since(t1)
		ti += t1.Sub(t0)
	}
	flops := 2 * float64(n) * float64(n) * float64(batch) * float64(b.N)
	b.ReportMetric(flops/ti.Seconds()/1e9, "int-GFLOP/s")
	b.ReportMetric(flops/tf.Seconds()/1e9, "float-GFLOP/s")
	b.ReportMetric(tf.Seconds()/ti.Seconds(), "speedup")
}

// BenchmarkQuantizeAct is the per-product cost of quantizing one 4096-value
// activation row to each block format.
func BenchmarkQuantizeAct(b *testing.B) {
	x := randVec(rand.New(rand.NewPCG(3, 3)), 4096)
	q8, qk := make([]q8Act, 4096/Q8Block), make([]q8KAct, 4096/QK_K)
	b.Run("Q8/4096", func(b *testing.B) {
		b.SetBytes(4 * 4096)
		for b.Loop() {
			quantizeQ8Act(q8, x)
		}
	})
	b.Run("Q8K/4096", func(b *testing.B) {
		b.SetBytes(4 * 4096)
		for b.Loop() {
			quantizeQ8KAct(qk, x)
		}
	})
	// The forms a Pool runs on its path (assembly where the CPU has it).
	var a quantAct
	// The K-quants' quantizer on each path with its own form: Go on
	// generic, AVX2 on avx2 (and avxvnni), AVX-512 on avx512 (and amx).
	for _, kp := range []kpath{pathGeneric, pathAVX2, pathAVX512} {
		if !kp.runs() {
			continue
		}
		b.Run(fmt.Sprintf("Q8K/%s/4096", kp), func(b *testing.B) {
			b.SetBytes(4 * 4096)
			for b.Loop() {
				a.fill(kp, actQ8K, x, 1, 4096)
			}
		})
	}
	for _, f := range []actFormat{actQ8, actQ8K} {
		b.Run(fmt.Sprintf("fill/%s/format=%d/4096", best, f), func(b *testing.B) {
			b.SetBytes(4 * 4096)
			for b.Loop() {
				a.fill(best, f, x, 1, 4096)
			}
		})
	}
}
