package llama

// An adapter's rows and columns follow the layout of the checkpoint it was
// trained or converted from; where llama.cpp's converter reorders a base
// model's weights, the adapter must be reordered the same way before it is
// applied to a base in the other layout. Two such reorderings exist: a
// llama's Q/K rows (its interleaved rotary embedding) and a hybrid's value
// heads (Qwen3.5's Gated DeltaNet, grouped in Hugging Face, tiled in
// GGUF).

// loraRowOrder reports how B's rows of the Q and K projections must be
// reordered for m. llama.cpp's converter permutes a llama model's Q/K rows
// for its interleaved (RopeNorm) rotary embedding, and a LoRA GGUF of a
// llama model carries the same permutation on lora_B; Hugging Face (PEFT)
// keeps the half-split order that RopeNeoX expects. qwen2 and qwen3 GGUFs
// are never permuted. The result is +1 to permute (PEFT adapter on a
// permuted base), -1 for the inverse (llama GGUF adapter on a Hugging
// Face llama directory), 0 for nothing.
func loraRowOrder(adapterPermuted bool, m *Model) int {
	basePermuted := m.Config.Arch == "llama" && m.Config.Rope == RopeNorm
	switch {
	case basePermuted && !adapterPermuted:
		return +1
	case !basePermuted && adapterPermuted:
		return -1
	}
	return 0
}

// permuteRows reorders the rows of b (heads x hd rows of cols values)
// between Hugging Face order and llama.cpp's: with dir +1, row h·hd+2j+s
// of the result is row h·hd+(hd/2)·s+j of b; with -1 the inverse.
func permuteRows(b []float32, heads, cols int, dir int) []float32 {
	out := make([]float32, len(b))
	hd := len(b) / cols / heads
	half := hd / 2
	for h := range heads {
		for j := range half {
			for s := range 2 {
				ggufRow, hfRow := h*hd+2*j+s, h*hd+half*s+j
				src, dst := hfRow, ggufRow
				if dir < 0 {
					src, dst = ggufRow, hfRow
				}
				copy(out[dst*cols:(dst+1)*cols], b[src*cols:(src+1)*cols])
			}
		}
	}
	return out
}

// reorder puts the adapter's rows and columns in the base model's order:
// the Q/K rows of B by loraRowOrder (adapterPermuted: the adapter is in
// llama.cpp's llama order) and the value heads of the Gated DeltaNet
// projections by loraValueOrder (adapterTiled: the adapter is in GGUF's
// tiled order).
func (a *Adapter) reorder(adapterPermuted, adapterTiled bool) {
	c := a.model.Config
	if dir := loraRowOrder(adapterPermuted, a.model); dir != 0 {
		for l := range a.layers {
			for _, t := range [...]struct {
				k     loraKind
				heads int
			}{{loraQ, c.Heads}, {loraK, c.KVHeads}} {
				if p := &a.layers[l][t.k]; p.b.Rows > 0 {
					p.b.F32 = permuteRows(p.b.F32, t.heads, p.b.Cols, dir)
				}
			}
		}
	}
	dir := loraValueOrder(adapterTiled, a.model)
	if dir == 0 {
		return
	}
	s := c.Linear
	src := valueHeadOrder(s, dir)
	for l := range a.layers {
		ps := &a.layers[l]
		if p := &ps[loraLinQKV]; p.b.Rows > 0 {
			p.b.F32 = permuteHeadRows(p.b.F32, p.b.Cols, 2*s.QKDim(), s.ValueDim, src)
		}
		if p := &ps[loraLinZ]; p.b.Rows > 0 {
			p.b.F32 = permuteHeadRows(p.b.F32, p.b.Cols, 0, s.ValueDim, src)
		}
		if p := &ps[loraLinOut]; p.a.Rows > 0 {
			p.a.F32 = permuteHeadCols(p.a.F32, p.a.Cols, s.ValueDim, src)
		}
	}
}

// loraValueOrder reports how the value heads of a hybrid's Gated DeltaNet
// adapter pairs must be reordered for m. llama.cpp's converter reorders a
// Qwen3.5's value heads from Hugging Face's grouped order (value head h
// reads key head h / (ValueHeads/KeyHeads)) to the tiled order ggml
// broadcasts in (value head j reads key head j % KeyHeads), in the base
// model and in a LoRA GGUF alike: the V rows of in_proj_qkv and the rows of
// in_proj_z (lora_B), the columns of out_proj (lora_A). The result is +1 to
// tile (PEFT adapter on a GGUF base), -1 to group (GGUF adapter on a
// Hugging Face directory), 0 for nothing (a model without Gated DeltaNet
// layers, or the same order).
func loraValueOrder(adapterTiled bool, m *Model) int {
	if !m.Config.Hybrid() {
		return 0
	}
	switch baseTiled := m.Config.Linear.Tiled; {
	case baseTiled && !adapterTiled:
		return +1
	case !baseTiled && adapterTiled:
		return -1
	}
	return 0
}

// valueHeadOrder returns, per value head of the reordered result, the value
// head of the source it is taken from. GGUF value head j is Hugging Face
// value head (j % KeyHeads)·(ValueHeads/KeyHeads) + j / KeyHeads (the
// converter's reshape to [KeyHeads, ValueHeads/KeyHeads] and transpose);
// dir +1 goes from Hugging Face order to GGUF's, -1 back.
func valueHeadOrder(s LinearShape, dir int) []int {
	per := s.ValueHeads / s.KeyHeads
	src := make([]int, s.ValueHeads)
	for j := range src {
		hf := (j%s.KeyHeads)*per + j/s.KeyHeads
		if dir > 0 {
			src[j] = hf
		} else {
			src[hf] = j
		}
	}
	return src
}

// permuteHeadRows reorders the value heads of b (rows of cols values):
// from row first on, hd rows per head, head j of the result is head src[j]
// of b; the rows before first stay.
func permuteHeadRows(b []float32, cols, first, hd int, src []int) []float32 {
	out := append([]float32(nil), b...)
	for j, from := range src {
		dst, s := (first+j*hd)*cols, (first+from*hd)*cols
		copy(out[dst:dst+hd*cols], b[s:s+hd*cols])
	}
	return out
}

// permuteHeadCols reorders the value heads of the columns of a (rows of
// cols values, hd columns per head): in every row, head j of the result is
// head src[j] of a.
func permuteHeadCols(a []float32, cols, hd int, src []int) []float32 {
	out := make([]float32, len(a))
	for row := 0; row < len(a); row += cols {
		for j, from := range src {
			copy(out[row+j*hd:row+(j+1)*hd], a[row+from*hd:row+(from+1)*hd])
		}
	}
	return out
}
