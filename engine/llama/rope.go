package llama

import "math"

// ropeTable holds the rotary cosines and sines of positions [0, maxPos) for
// one model: its head size, base, pairing style and per-frequency factors.
// It is read-only once built, so the pool's workers may share it.
type ropeTable struct {
	half int // RotaryDims/2: pairs per head
	head int // HeadDim: the stride of the heads

	neox     bool      // pair (i, i+half) instead of (2i, 2i+1)
	cos, sin []float32 // [pos*half + i]
}

// newRopeTable precomputes the angles of every position below c.SeqLen
// from RopeFreqs. With partial rotary (Qwen3.5) only a head's first
// RotaryDims dimensions turn, paired within them.
func newRopeTable(c Config, factors []float32) *ropeTable {
	hd := c.RotaryDims()
	half := hd / 2
	t := &ropeTable{half: half, head: c.HeadDim(), neox: c.Rope == RopeNeoX,
		cos: make([]float32, c.SeqLen*half), sin: make([]float32, c.SeqLen*half)}
	freq := RopeFreqs(c, factors)
	for p := range c.SeqLen {
		for i, f := range freq {
			s, co := math.Sincos(float64(p) * f)
			t.cos[p*half+i], t.sin[p*half+i] = float32(co), float32(s)
		}
	}
	return t
}

// RopeFreqs are the rotary frequencies of a model of shape c, one per pair
// a head turns (RotaryDims/2, lowest first): theta^(-2i/RotaryDims),
// divided by factors[i] when factors is not nil (Llama 3's scaling), in
// float64 as the reference computes them. The serving forward pass and the
// trainer build their tables from it, so the two rotate alike.
func RopeFreqs(c Config, factors []float32) []float64 {
	hd := c.RotaryDims()
	freq := make([]float64, hd/2)
	for i := range freq {
		freq[i] = 1 / math.Pow(float64(c.RopeTheta), float64(2*i)/float64(hd))
		if factors != nil {
			freq[i] /= float64(factors[i])
		}
	}
	return freq
}

// apply rotates every head of vec (a whole number of heads) for position
// pos, which must be below the table's limit.
func (t *ropeTable) apply(vec []float32, pos int) {
	n := t.half
	cos, sin := t.cos[pos*n:(pos+1)*n], t.sin[pos*n:(pos+1)*n]
	for h := 0; h+t.head <= len(vec); h += t.head {
		head := vec[h : h+2*n]
		if t.neox {
			lo, hi := head[:n], head[n:2*n]
			for i, c := range cos {
				s := sin[i]
				v0, v1 := lo[i], hi[i]
				lo[i] = v0*c - v1*s
				hi[i] = v0*s + v1*c
			}
			continue
		}
		for i, c := range cos {
			s := sin[i]
			v0, v1 := head[2*i], head[2*i+1]
			head[2*i] = v0*c - v1*s
			head[2*i+1] = v0*s + v1*c
		}
	}
}

// Llama3RopeFactors computes the per-frequency divisors of Llama 3's
// rope_scaling (rope_type "llama3") for heads of headDim values and base
// theta: 1 for wavelengths shorter than origCtx/highFreq, factor for those
// longer than origCtx/lowFreq, and a smooth blend between. They are the
// values convert_hf_to_gguf.py stores as the rope_freqs tensor.
func Llama3RopeFactors(headDim int, theta, factor, lowFreq, highFreq, origCtx float64) []float32 {
	lowWavelen := origCtx / lowFreq
	highWavelen := origCtx / highFreq
	out := make([]float32, headDim/2)
	for i := range out {
		freq := 1 / math.Pow(theta, float64(2*i)/float64(headDim))
		wavelen := 2 * math.Pi / freq
		switch {
		case wavelen < highWavelen:
			out[i] = 1
		case wavelen > lowWavelen:
			out[i] = float32(factor)
		default:
			smooth := (origCtx/wavelen - lowFreq) / (highFreq - lowFreq)
			out[i] = float32(1 / ((1-smooth)/factor + smooth))
		}
	}
	return out
}
