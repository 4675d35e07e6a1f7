package sampling

// draw returns the candidate at r along the running sum of the weights of
// the candidates in the nucleus, walked in id order (cand and memb nil:
// every id) or in the order of the list that holds the nucleus (memb, else
// cand); the nucleus is the candidates whose rank key is at least thr.
// When rounding carries r past the end it returns the last candidate with
// weight; -1 when none has weight.
func draw(r float64, probs []float32, cand, memb []int32, thr uint64) int {
	if memb == nil && cand == nil {
		return drawAll(r, probs)
	}
	if memb == nil {
		memb = cand
	}
	return drawListed(r, probs, memb, thr)
}

// drawAll walks every id. It goes eight weights at a time until the block
// that holds r: their sum is a tree, so the walk does not wait on an add
// per weight.
func drawAll(r float64, probs []float32) int {
	var acc float64
	i := 0
	for ; i+8 <= len(probs); i += 8 {
		b := probs[i : i+8 : i+8]
		blk := ((float64(b[0]) + float64(b[1])) + (float64(b[2]) + float64(b[3]))) +
			((float64(b[4]) + float64(b[5])) + (float64(b[6]) + float64(b[7])))
		if r < acc+blk {
			break
		}
		acc += blk
	}
	for ; i < len(probs); i++ {
		if p := probs[i]; p > 0 {
			acc += float64(p)
			if r < acc {
				return i
			}
		}
	}
	for id := len(probs) - 1; id >= 0; id-- { // rounding
		if probs[id] > 0 {
			return id
		}
	}
	return -1
}

// drawListed walks the ids of list whose rank key is at least thr.
func drawListed(r float64, probs []float32, list []int32, thr uint64) int {
	var acc float64
	last := -1
	for _, id := range list {
		if p := probs[id]; p > 0 && rankKey(p, int(id)) >= thr {
			acc += float64(p)
			last = int(id)
			if r < acc {
				return int(id)
			}
		}
	}
	return last // rounding: the last candidate with weight
}
