package kerngen

import "fmt"

// Families lists the assembly kernel families whose Go declarations and
// dispatch switches are generated. A new weight type with assembly adds its
// rows here (beside its row in kernels/types.go and its .s files).
func Families() []Family {
	return []Family{floatPacked(), intPacked(), intRows(), intRowPairs()}
}

// floatPacked is the avx512 path's F32, F16 and BF16 products over packed
// weights: <t>p<G>x<A> meets G groups of sixteen rows with A activation
// rows (A up to 3 for four groups, 12 for two and one).
func floatPacked() Family {
	var shapes []Shape
	for _, g := range []struct{ groups, acts int }{{4, 3}, {2, 12}, {1, 12}} {
		for a := 1; a <= g.acts; a++ {
			shapes = append(shapes, Shape{
				Cases:  []string{fmt.Sprint(g.groups), fmt.Sprint(a)},
				Suffix: fmt.Sprintf("p%dx%d", g.groups, a),
			})
		}
	}
	return Family{
		File:  "matmul_float_packed_calls_amd64.go",
		Decls: "matmul_float_packed_asm_amd64.go",
		Doc: `Implemented in matmul_float_packed_amd64.s: the avx512 path's F32, F16
and BF16 products over packed weights (pack_layout.go's float layout).
<t>p<G>x<A> multiplies G (4, 2 or 1) packed groups of sixteen weight
rows (w, the second gs bytes on) by A (1..12) activation rows (x, xs
bytes apart) over n columns, prefetching the lines of n columns of each
group at pf, and stores activation row a's 16*G sums at out + a*ostride
bytes, the lanes set in masks only (bits 0-15 group 0's, 16-31 group
1's); with add != 0 the sums start from the partial sums stored there.
Every kernel adds an output's terms in column order, one FMA each, so
the sums do not depend on G, A or the column chunks.`,
		Recv:         "pKernel",
		RecvDoc:      "pKernel selects the packed float kernels of a weight type; direct calls\nin a switch, not func values, keep the arguments from escaping.",
		Method:       "call",
		MethodDoc:    "call runs the kernel of g (4, 2 or 1) groups and a activation rows (1..3\nfor four groups, 1..12 for the others).",
		Selectors:    []string{"g", "a"},
		SelectorType: "int",
		Params:       "w unsafe.Pointer, gs uintptr, pf unsafe.Pointer, x *float32, xs uintptr, n int, out *float32, ostride uintptr, masks int, add int",
		Shapes:       shapes,
		Kernels: []Kernel{
			{Type: "F32", Prefix: "f32"},
			{Type: "F16", Prefix: "f16"},
			{Type: "BF16", Prefix: "bf16"},
		},
	}
}

// intPacked is the avx512 path's integer products over packed weights:
// <t>p16x<N> meets one group of sixteen rows with N = 1, 2, 4 or 8
// activation rows. The 32-value types take the offset of their quants.
func intPacked() Family {
	const legacy = "w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int"
	const kquant = "w, xa unsafe.Pointer, xs uintptr, nb int, out *float32, ostride uintptr, mask int"
	var shapes []Shape
	for rows := range 4 {
		shapes = append(shapes, Shape{Cases: []string{fmt.Sprint(rows)}, Suffix: fmt.Sprintf("p16x%d", 1<<rows)})
	}
	return Family{
		File:  "matmul_int_packed_calls_amd64.go",
		Decls: "matmul_int_packed_asm_amd64.go",
		Doc: `Implemented in intpack_amd64.s (Q8_0), intpack_nib_amd64.s (Q4_0, Q5_0,
Q4_1, Q5_1) and intpack_k_amd64.s (the K-quants): the products of one
packed group of sixteen weight rows (w; the 32-value types' quants quant
bytes on) with n = 1, 2, 4 or 8 activation rows of nb q8Act (q8KAct for
the K-quants) blocks from xa, xs bytes apart; activation row j's sixteen
sums go to out + j*ostride bytes, the lanes set in mask only.`,
		Recv:         "packKernel",
		RecvDoc:      "packKernel selects the packed integer kernels of a weight type; direct\ncalls in a switch, not func values, keep the arguments from escaping.",
		Method:       "call",
		MethodDoc:    "call runs the kernel for 1<<rows activation rows (rows 0..3).",
		Has:          "has",
		Selectors:    []string{"rows"},
		SelectorType: "int",
		Params:       legacy,
		Shapes:       shapes,
		Kernels: []Kernel{
			{Type: "Q8_0", Prefix: "q8_0"},
			{Type: "Q4_0", Prefix: "q4_0"},
			{Type: "Q5_0", Prefix: "q5_0"},
			{Type: "Q4_1", Prefix: "q4_1"},
			{Type: "Q5_1", Prefix: "q5_1"},
			{Type: "Q4_K", Prefix: "q4_K", Params: kquant},
			{Type: "Q5_K", Prefix: "q5_K", Params: kquant},
			{Type: "Q6_K", Prefix: "q6_K", Params: kquant},
			{Type: "Q3_K", Prefix: "q3_K", Params: kquant},
			{Type: "Q2_K", Prefix: "q2_K", Params: kquant},
		},
	}
}

// intRows is the avx2 path's integer products of four row-major weight
// rows with one activation row.
func intRows() Family {
	return Family{
		File:  "matmul_int_rows_calls_amd64.go",
		Decls: "matmul_int_rows_asm_amd64.go",
		Doc: `Implemented in intdot_amd64.s and intdot_k_amd64.s: the integer
products of four weight rows (a short block repeats its last row) with
one row of n quantized activation blocks at xa (q8Act for the 32-value
types, q8KAct for the K-quants); out[0:4] receives the four sums.`,
		Recv:      "intKernel",
		RecvDoc:   "intKernel selects the avx2 integer kernels of a weight type; direct\ncalls in a switch, not func values, keep the result array on the stack.",
		Method:    "call",
		MethodDoc: "call runs the one-activation-row kernel.",
		Params:    "w0, w1, w2, w3, xa unsafe.Pointer, n int, out *[8]float32",
		Shapes:    []Shape{{Suffix: "x4"}},
		Kernels:   intRowKernels("Q8_0", "Q4_0", "Q5_0", "Q4_1", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"),
	}
}

// intRowPairs is intRows for two activation rows; a type without the
// kernel makes call2 report false.
func intRowPairs() Family {
	return Family{
		File:  "matmul_int_rows_calls_amd64.go",
		Decls: "matmul_int_rows_asm_amd64.go",
		Doc: `Implemented in intdot_x2_amd64.s and intdot_kx2_amd64.s: the products
of four weight rows with two activation rows xa0 and xa1 (out[0:4] and
out[4:8]). A row's sums are bit-identical to the one-row kernel's.`,
		Recv:      "intKernel",
		Method:    "call2",
		MethodDoc: "call2 is call for two activation rows; false means the type has no\ntwo-row kernel.",
		Reports:   true,
		Params:    "w0, w1, w2, w3, xa0, xa1 unsafe.Pointer, n int, out *[8]float32",
		Shapes:    []Shape{{Suffix: "x4x2"}},
		Kernels:   intRowKernels("Q8_0", "Q4_0", "Q5_0", "Q4_1", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q6_K"),
	}
}

func intRowKernels(types ...string) []Kernel {
	ks := make([]Kernel, len(types))
	for i, t := range types {
		ks[i] = Kernel{Type: t, Prefix: lowerPrefix(t)}
	}
	return ks
}

// lowerPrefix is the assembly name prefix of a type: "Q4_K" is "q4_K".
func lowerPrefix(t string) string { return "q" + t[1:] }
