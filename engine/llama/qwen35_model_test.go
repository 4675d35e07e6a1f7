//go:build unix

package llama

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kiln-ai/kiln/engine/internal/mmap"
	"github.com/kiln-ai/kiln/kernels"
)

// Random-weight Qwen3.5 models in the published shapes, built from the
// shape alone: the quantized blocks are drawn straight into memory
// mapped outside the Go heap, never through F32 weights (the 4B in F32
// is 16 GB), and once kernels.Prepare has packed a matrix its row-major
// pages are released, as the GGUF loader releases a file's, so that the
// model is resident once.

// qwen35Shapes are Qwen3.5-0.8B and Qwen3.5-4B (text model; hidden size,
// layers, heads, KV heads, head size and vocabulary as published, the
// rest as the configs the issue quotes), value heads tiled as in GGUF.
var qwen35Shapes = []struct {
	name string
	c    Config
}{
	{"0.8B", qwen35Config(1024, 3584, 24, 8, 2, 16)},
	{"4B", qwen35Config(2560, 9216, 32, 16, 4, 32)},
}

func qwen35Config(dim, hidden, layers, heads, kvHeads, valueHeads int) Config {
	return Config{
		Arch: "qwen35", Dim: dim, HiddenDim: hidden, Layers: layers, Heads: heads, KVHeads: kvHeads,
		HeadSize: 256, Vocab: 248320, SeqLen: 4096, NormEps: 1e-6, RopeTheta: 1e7, Rope: RopeNeoX,
		QKNorm: true, FullAttnInterval: 4, RotaryDim: 64, AttnGate: true,
		Linear: LinearShape{KeyHeads: 16, ValueHeads: valueHeads, KeyDim: 128, ValueDim: 128, ConvKernel: 4, Tiled: true},
	}
}

// quantMix gives the type of a GGUF tensor (its name without blk.N. and
// .weight) of the i-th of n layers that have it.
type quantMix func(tensor string, i, n int) kernels.DType

// mixQ4KM is llama.cpp's Q4_K_M (llama_tensor_get_type): Q4_K, but Q6_K
// for the classifier (the embedding when tied) and for attn_v and
// ffn_down in the layers use_more_bits picks (the first and last eighth
// and every third between: half of them), Q5_K for a fused attn_qkv.
func mixQ4KM(tensor string, i, n int) kernels.DType {
	moreBits := i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
	switch {
	case tensor == "token_embd":
		return kernels.Q6_K
	case (tensor == "attn_v" || tensor == "ffn_down") && moreBits:
		return kernels.Q6_K
	case tensor == "attn_qkv":
		return kernels.Q5_K
	}
	return kernels.Q4_K
}

func mixQ8_0(string, int, int) kernels.DType { return kernels.Q8_0 }

// qwen35QuantModel builds a tied model of shape c whose matrices are
// random valid blocks of the types mix gives, its vectors drawn as
// NewRandom draws them.
func qwen35QuantModel(tb testing.TB, c Config, mix quantMix, seed uint64) *Model {
	tb.Helper()
	c = c.withDefaults()
	if err := c.Validate(); err != nil {
		tb.Fatal(err)
	}
	var mats []*kernels.Matrix
	mat := func(w *kernels.Matrix, rows, cols int, typ kernels.DType) {
		*w = kernels.Matrix{Rows: rows, Cols: cols, Type: typ}
		mats = append(mats, w)
	}
	ones := func(n int) []float32 {
		f := make([]float32, n)
		for i := range f {
			f[i] = 1
		}
		return f
	}
	d, kv, s := c.Dim, c.KVDim(), c.Linear
	m := &Model{Config: c, Layers: make([]Layer, c.Layers), Norm: ones(d)}
	mat(&m.Embed, c.Vocab, d, mix("token_embd", 0, 1))
	m.Output = &m.Embed
	var vecs [][]float32
	vec := func(n int) []float32 { f := make([]float32, n); vecs = append(vecs, f); return f }
	ai := 0
	for l := range m.Layers {
		L := &m.Layers[l]
		L.AttnNorm, L.FFNNorm = ones(d), ones(d)
		mat(&L.W1, c.HiddenDim, d, mix("ffn_gate", l, c.Layers))
		mat(&L.W3, c.HiddenDim, d, mix("ffn_up", l, c.Layers))
		mat(&L.W2, d, c.HiddenDim, mix("ffn_down", l, c.Layers))
		if c.IsLinear(l) {
			dn := &DeltaNet{Conv: vec(s.ConvDim() * s.ConvKernel), DtBias: vec(s.ValueHeads), A: vec(s.ValueHeads), Norm: ones(s.ValueDim)}
			li, nl := c.linIndex(l), c.Layers-c.AttnLayers()
			mat(&dn.WQKV, s.ConvDim(), d, mix("attn_qkv", li, nl))
			mat(&dn.WZ, s.VDim(), d, mix("attn_gate", li, nl))
			mat(&dn.WB, s.ValueHeads, d, mix("ssm_beta", li, nl))
			mat(&dn.WA, s.ValueHeads, d, mix("ssm_alpha", li, nl))
			mat(&dn.WOut, d, s.VDim(), mix("ssm_out", li, nl))
			L.Lin = dn
			continue
		}
		na := c.AttnLayers()
		mat(&L.WQ, c.QProjDim(), d, mix("attn_q", ai, na))
		mat(&L.WK, kv, d, mix("attn_k", ai, na))
		mat(&L.WV, kv, d, mix("attn_v", ai, na))
		mat(&L.WO, d, c.QDim(), mix("attn_output", ai, na))
		L.QNorm, L.KNorm = vec(c.HeadDim()), vec(c.HeadDim())
		ai++
	}
	raws := fillQuant(tb, mats, vecs, seed)
	runtime.AddCleanup(m, func(raws [][]byte) {
		for _, r := range raws {
			_ = unix.Munmap(r)
		}
	}, raws)
	shapeVectors(m)
	embed := unsafe.SliceData(m.Embed.Raw)
	release := func(b []byte) {
		if unsafe.SliceData(b) != embed { // the lookup reads the embedding's rows
			_ = mmap.Release(b)
		}
	}
	if err := m.finish(release); err != nil {
		tb.Fatal(err)
	}
	return m
}

// shapeVectors turns the uniform draws (deviation 0.02) of m's
// convolution taps, dt biases, decay rates and Q/K norms into NewRandom's
// ranges.
func shapeVectors(m *Model) {
	for i := range m.Layers {
		L := &m.Layers[i]
		if L.Lin != nil {
			for _, v := range []struct {
				v     []float32
				scale float32
			}{{L.Lin.Conv, 15}, {L.Lin.DtBias, 25}, {L.Lin.A, 50}} { // NewRandom's deviations 0.3, 0.5, 1
				for j := range v.v {
					v.v[j] *= v.scale
				}
			}
			randomDeltaNet(L.Lin, m.Config.Linear.ConvKernel)
		}
		for _, w := range [][]float32{L.QNorm, L.KNorm} {
			for j := range w {
				w[j] = 1 + 5*w[j] // one plus deviation 0.1
			}
		}
	}
}

// fillQuant gives every matrix of mats random valid blocks (half-precision
// scales of order 1/256, as randomQuantModel's) in anonymous memory, and
// every vector of vecs uniform values of deviation 0.02, on one goroutine
// per CPU, each with its own stream; it returns the mappings, which the
// caller unmaps when the model is dropped.
func fillQuant(tb testing.TB, mats []*kernels.Matrix, vecs [][]float32, seed uint64) (raws [][]byte) {
	tb.Helper()
	for _, w := range mats {
		elems, size, ok := w.Type.Block()
		if !ok || w.Cols%elems != 0 {
			tb.Fatalf("cannot store a %dx%d matrix as %v", w.Rows, w.Cols, w.Type)
		}
		raw, err := unix.Mmap(-1, 0, w.Rows*w.Cols/elems*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			tb.Fatal(err)
		}
		w.Raw = raw
		raws = append(raws, raw)
	}
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for p := range workers {
		wg.Go(func() {
			for i := p; i < len(mats); i += workers {
				fillBlocks(mats[i], seed, uint64(i))
			}
			for i := p; i < len(vecs); i += workers {
				fillUniform(vecs[i], 0.02, seed, uint64(len(mats)+i))
			}
		})
	}
	wg.Wait()
	for _, w := range mats {
		if err := w.Validate(); err != nil {
			tb.Fatal(err)
		}
	}
	return raws
}

// fillBlocks fills w.Raw from the PCG stream (seed, stream): random bytes,
// then each block's scales and mins set to half-precision values.
func fillBlocks(w *kernels.Matrix, seed, stream uint64) {
	rng := rand.New(rand.NewPCG(seed, stream))
	raw := w.Raw
	i := 0
	for ; i+8 <= len(raw); i += 8 {
		binary.LittleEndian.PutUint64(raw[i:], rng.Uint64())
	}
	for ; i < len(raw); i++ {
		raw[i] = byte(rng.Uint32())
	}
	_, size, _ := w.Type.Block()
	for b := 0; b < len(raw); b += size {
		for _, off := range blockHalves[w.Type] {
			binary.LittleEndian.PutUint16(raw[b+off:], kernels.FloatToHalf((rng.Float32()*2-1)/256))
		}
	}
}

// weightBytes is the bytes of m's weights as a file stores them: the
// matrices (the tied embedding once) and the float vectors.
func weightBytes(m *Model) int64 {
	n := int64(m.Embed.Bytes()) + 4*int64(len(m.Norm))
	for i := range m.Layers {
		for _, w := range m.Layers[i].matrices() {
			n += int64(w.Bytes())
		}
		for _, v := range m.Layers[i].vectors() {
			n += 4 * int64(len(v))
		}
	}
	return n
}

// kvBytesPerToken is the KV cache one position of a sequence holds
// (float32 keys and values of every attention layer).
func kvBytesPerToken(c Config) int64 {
	return 2 * 4 * int64(c.AttnLayers()) * int64(c.KVDim())
}

// TestQwen35QuantModel checks the shape-only builder on a small hybrid:
// it validates, runs, and its logits are finite.
func TestQwen35QuantModel(t *testing.T) {
	c := qwen35Config(256, 512, 4, 2, 1, 4)
	c.Vocab, c.SeqLen = 300, 64
	c.Linear.KeyHeads = 2
	for _, mix := range []quantMix{mixQ4KM, mixQ8_0} {
		m := qwen35QuantModel(t, c, mix, 1)
		s := m.NewState(1, nil)
		logits := [][]float32{make([]float32, c.Vocab)}
		rows := []Row{{Pos: 0, Token: 5}, {Pos: 1, Token: 7, Logits: true}}
		s.Forward(rows, logits)
		for _, v := range logits[0] {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("logit %v", v)
			}
		}
	}
}
