package kernels

import "fmt"

// DType is the storage type of a weight matrix.
type DType uint8

// Storage types, numbered as GGUF's ggml_type.
const (
	F32  DType = 0
	F16  DType = 1
	Q4_0 DType = 2
	Q4_1 DType = 3
	Q5_0 DType = 6
	Q5_1 DType = 7
	Q8_0 DType = 8
	Q2_K DType = 10
	Q3_K DType = 11
	Q4_K DType = 12
	Q5_K DType = 13
	Q6_K DType = 14
	BF16 DType = 30
)

// typeTraits is everything the type-independent code knows of a storage
// type, one row a type as ggml's type_traits. The assembly of a type is
// listed in kerngen's spec (internal/kerngen/spec.go), which generates
// the switches that call it.
type typeTraits struct {
	name         string
	elems, bytes int // a block: elems weights stored in bytes bytes (ggml's blck_size and type_size)

	// act is the activation blocks its integer products read (actFloat:
	// it has none and always reads float32 activations).
	act actFormat

	// dequant decodes one block into len(dst) values; a type of
	// one-element blocks decodes a whole row in one call. nil for F32.
	dequant func(dst []float32, blk []byte)

	// The reference products of one row of blocks: with float32
	// activations (nil for F32, which is not stored as bytes), and with
	// the quantized activations of act.
	dot    func(raw []byte, x []float32) float32
	dotQ8  func(raw []byte, xa []q8Act) float32
	dotQ8K func(raw []byte, xa []q8KAct) float32

	// pack lays a matrix out for the avx512 path (nil: the type is not
	// packed), lanes is the packed group's layout, and the packedDot
	// functions are the reference product of lane i of a packed group
	// (quant: the offset of its quants) with one activation row.
	pack       func(m *Matrix, buf []byte) *packed
	lanes      laneLayout
	packedDot  func(grp []byte, quant, i int, xa []q8Act) float32
	packedDotK func(grp []byte, i int, xa []q8KAct) float32
}

// laneLayout is the size of a packed group of sixteen rows, per block of
// the type (pack_layout.go): scales bytes of each block's scales come
// first (the group's quants then start at the next 64-byte boundary),
// then quants bytes of each block's quants (a K-quant's whole packed
// super-block, a float type's sixteen elements).
type laneLayout struct{ scales, quants int }

// types holds every supported type's traits; a zero row is an
// unsupported type. init fills it: its functions read it, which a
// package-level initializer may not.
var types [BF16 + 1]typeTraits

func init() {
	types = [...]typeTraits{
		F32:  {name: "F32", elems: 1, bytes: 4, pack: packF32, lanes: laneLayout{0, packRows * 4}},
		F16:  {name: "F16", elems: 1, bytes: 2, dequant: dequantF16, dot: dotF16, pack: packHalves, lanes: laneLayout{0, packRows * 2}},
		BF16: {name: "BF16", elems: 1, bytes: 2, dequant: dequantBF16, dot: dotBF16, pack: packHalves, lanes: laneLayout{0, packRows * 2}},
		Q4_0: {name: "Q4_0", elems: Q8Block, bytes: 18, act: actQ8, dequant: dequantQ4_0, dot: dotQ4_0, dotQ8: dotQ4_0Int, pack: q4_0Nibbles.pack, lanes: laneLayout{32, 256}, packedDot: q4_0Nibbles.lane},
		Q4_1: {name: "Q4_1", elems: Q8Block, bytes: 20, act: actQ8, dequant: dequantQ4_1, dot: dotQ4_1, dotQ8: dotQ4_1Int, pack: q4_1Nibbles.pack, lanes: laneLayout{64, 256}, packedDot: q4_1Nibbles.lane},
		Q5_0: {name: "Q5_0", elems: Q8Block, bytes: 22, act: actQ8, dequant: dequantQ5_0, dot: dotQ5_0, dotQ8: dotQ5_0Int, pack: q5_0Nibbles.pack, lanes: laneLayout{32, 320}, packedDot: q5_0Nibbles.lane},
		Q5_1: {name: "Q5_1", elems: Q8Block, bytes: 24, act: actQ8, dequant: dequantQ5_1, dot: dotQ5_1, dotQ8: dotQ5_1Int, pack: q5_1Nibbles.pack, lanes: laneLayout{64, 320}, packedDot: q5_1Nibbles.lane},
		Q8_0: {name: "Q8_0", elems: Q8Block, bytes: Q8BlockBytes, act: actQ8, dequant: dequantQ8_0, dot: dotQ8_0, dotQ8: dotQ8_0Int, pack: packQ8_0, lanes: laneLayout{2 * packRows, Q8Block * packRows}, packedDot: packedQ8_0Lane},
		Q2_K: {name: "Q2_K", elems: QK_K, bytes: 84, act: actQ8K, dequant: dequantQ2_K, dot: dotQ2_K, dotQ8K: dotQ2_KInt, pack: packQ2_K, lanes: laneLayout{0, q2KPackBlock}, packedDotK: packedQ2_KLane},
		Q3_K: {name: "Q3_K", elems: QK_K, bytes: 110, act: actQ8K, dequant: dequantQ3_K, dot: dotQ3_K, dotQ8K: dotQ3_KInt, pack: packQ3_K, lanes: laneLayout{0, q3KPackBlock}, packedDotK: packedQ3_KLane},
		Q4_K: {name: "Q4_K", elems: QK_K, bytes: 144, act: actQ8K, dequant: dequantQ4_K, dot: dotQ4_K, dotQ8K: dotQ4_KInt, pack: packQ4_K, lanes: laneLayout{0, q4KPackBlock}, packedDotK: packedQ4_KLane},
		Q5_K: {name: "Q5_K", elems: QK_K, bytes: 176, act: actQ8K, dequant: dequantQ5_K, dot: dotQ5_K, dotQ8K: dotQ5_KInt, pack: packQ5_K, lanes: laneLayout{0, q5KPackBlock}, packedDotK: packedQ5_KLane},
		Q6_K: {name: "Q6_K", elems: QK_K, bytes: 210, act: actQ8K, dequant: dequantQ6_K, dot: dotQ6_K, dotQ8K: dotQ6_KInt, pack: packQ6_K, lanes: laneLayout{0, q6KPackBlock}, packedDotK: packedQ6_KLane},
	}
}

// traits is t's row of the table; false for an unsupported type.
func (t DType) traits() (*typeTraits, bool) {
	if int(t) < len(types) && types[t].elems != 0 {
		return &types[t], true
	}
	return nil, false
}

func (t DType) String() string {
	if tr, ok := t.traits(); ok {
		return tr.name
	}
	return fmt.Sprintf("DType(%d)", uint8(t))
}

// Block is the block layout of a supported type: elems weights are stored
// in bytes bytes (1 and 4 for F32). ok is false for an unsupported type.
func (t DType) Block() (elems, bytes int, ok bool) {
	tr, ok := t.traits()
	if !ok {
		return 0, 0, false
	}
	return tr.elems, tr.bytes, true
}

// Types lists every supported storage type, in ggml_type order.
func Types() []DType {
	var out []DType
	for t := range types {
		if types[t].elems != 0 {
			out = append(out, DType(t))
		}
	}
	return out
}

// Q8Block is the number of weights in one Q8_0 block, and Q8BlockBytes its
// size: a little-endian IEEE half scale followed by 32 int8 quants (ggml's
// block_q8_0).
const (
	Q8Block      = 32
	Q8BlockBytes = 34
)

// QK_K is the number of weights in one K-quant super-block (Q2_K..Q6_K).
const QK_K = 256

//go:generate go run ./internal/kerngen/cmd/kerngen
