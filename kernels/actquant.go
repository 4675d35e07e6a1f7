package kernels

import "math"

// Activation quantization for the integer-dot products (ggml's way of
// multiplying quantized weights): a product quantizes its activation rows
// once, to the block format its weight type pairs with, and every weight
// block then meets int8 activations in integer arithmetic with one float
// scale multiply per block. The legacy types (Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0) pair with 32-value blocks (q8Act, ggml's block_q8_0), the K-quants
// with 256-value blocks (q8KAct, ggml's block_q8_K). The rounding is ggml's, so that the
// products move away from the float ones exactly as llama.cpp's do.

// q8Act is one 32-value block of quantized activations: x ≈ d*qs. d is
// rounded to half precision, as ggml stores it; sum is the quants' sum.
// The assembly reads the fields at fixed offsets (0, 32, 36; 40 bytes).
type q8Act struct {
	qs  [Q8Block]int8
	d   float32
	sum int32
}

// q8KAct is one 256-value block of quantized activations: x ≈ d*qs, with
// bsums[i] the sum of quants 16i..16i+15. The assembly reads the fields at
// fixed offsets (0, 256, 288; 304 bytes).
type q8KAct struct {
	qs    [QK_K]int8
	bsums [QK_K / 16]int16
	d     float32
	_     [12]byte
}

// actFormat is the activation block format a weight type's integer product
// reads; actFloat means the type has no integer product and reads float32.
type actFormat uint8

const (
	actFloat actFormat = iota
	actQ8
	actQ8K
)

// intFormat is the activation format of t's integer product.
func intFormat(t DType) actFormat {
	if tr, ok := t.traits(); ok {
		return tr.act
	}
	return actFloat
}

// quantizeQ8Act writes x (a multiple of 32 values) into len(x)/32 blocks,
// as ggml's quantize_row_q8_0 does on AVX2: d = max|x|/127 (stored as
// half), q = x/d rounded half to even; a block whose d rounds to a zero
// half is all zero (ggml keeps its quants, which then meet d = 0).
func quantizeQ8Act(dst []q8Act, x []float32) {
	dst = dst[:len(x)/Q8Block]
	for k := range dst {
		blk := (*[Q8Block]float32)(x[k*Q8Block:])
		var amax float32
		for _, v := range blk {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		a := &dst[k]
		a.d = HalfToFloat(FloatToHalf(d))
		if a.d == 0 {
			// The block adds nothing to any product; its quants are zero
			// too, rather than x/d for a d too small for 1/d to be finite.
			*a = q8Act{}
			continue
		}
		id := 1 / d
		var sum int32
		for j, v := range blk {
			q := int8(math.RoundToEven(float64(v * id)))
			a.qs[j] = q
			sum += int32(q)
		}
		a.sum = sum
	}
}

// quantizeQ8KAct writes x (a multiple of 256 values) into len(x)/256
// blocks, as ggml's quantize_row_q8_K: the value of largest magnitude m
// maps to -127, scale d = -m/127 kept in float32, quants rounded half to
// even and capped at 127; a block whose -127/m overflows is all zero.
func quantizeQ8KAct(dst []q8KAct, x []float32) {
	dst = dst[:len(x)/QK_K]
	for k := range dst {
		blk := (*[QK_K]float32)(x[k*QK_K:])
		a := &dst[k]
		var amax, m float32
		for _, v := range blk {
			if av := abs32(v); av > amax {
				amax, m = av, v
			}
		}
		iscale := -127 / m
		if amax == 0 || math.IsInf(float64(iscale), 0) {
			// All zero, or so small (under 127/MaxFloat32) that 1/d
			// overflows: the block adds nothing to any product.
			*a = q8KAct{}
			continue
		}
		for j, v := range blk {
			a.qs[j] = int8(min(127, math.RoundToEven(float64(iscale*v))))
		}
		for i := range a.bsums {
			var s int16
			for _, q := range a.qs[16*i : 16*i+16] {
				s += int16(q)
			}
			a.bsums[i] = s
		}
		a.d = 1 / iscale
	}
}

// abs32 is |v| (compiled to a branch-free mask).
func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }
