package train

import "math"

// lossChunk is how many target rows the classifier handles at a time, which
// bounds the logits held at once to lossChunk x Vocab.
const lossChunk = 16

// lossBack computes the mean cross-entropy of the target tokens (ids[t+1]
// for every t with target[t+1]) from the final normalised stream a.xf and
// writes its gradient with respect to a.xf into dxf (T*Dim, cleared
// first). It returns the loss and the number of target tokens.
func (nt *net[F]) lossBack(ids []int, target []bool, dxf []F) (float64, int) {
	c := nt.c
	d, vocab := c.Dim, c.Vocab
	n := len(ids)
	clear(dxf[:n*d])
	var rows []int
	for t := 0; t+1 < n; t++ {
		if target[t+1] {
			rows = append(rows, t)
		}
	}
	if len(rows) == 0 {
		return 0, 0
	}
	bs := &nt.bs
	if len(bs.logits) < lossChunk*vocab {
		bs.logits = make([]F, lossChunk*vocab)
		bs.xc = make([]F, lossChunk*d)
		bs.dxc = make([]F, lossChunk*d)
	}
	norm := 1 / float64(len(rows))
	var loss float64
	for lo := 0; lo < len(rows); lo += lossChunk {
		chunk := rows[lo:min(lo+lossChunk, len(rows))]
		k := len(chunk)
		for i, t := range chunk {
			copy(bs.xc[i*d:(i+1)*d], nt.a.xf[t*d:(t+1)*d])
		}
		logits := bs.logits[:k*vocab]
		nt.la.matmul(logits, nt.m.Output, bs.xc[:k*d], k)
		for i, t := range chunk {
			loss += norm * softmaxGrad(logits[i*vocab:(i+1)*vocab], ids[t+1], norm)
		}
		dxc := bs.dxc[:k*d]
		clear(dxc)
		nt.la.matmulT(dxc, nt.m.Output, logits, k)
		for i, t := range chunk {
			copy(dxf[t*d:(t+1)*d], dxc[i*d:(i+1)*d])
		}
	}
	return loss, len(rows)
}

// softmaxGrad replaces logits by scale·(softmax(logits) − onehot(label)),
// the gradient of scale·(−log softmax(logits)[label]), and returns
// −log softmax(logits)[label], all in float64.
func softmaxGrad[F float](logits []F, label int, scale float64) float64 {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = max(mx, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - mx)
	}
	lse := mx + math.Log(sum)
	nll := lse - float64(logits[label])
	for i, v := range logits {
		logits[i] = F(scale * math.Exp(float64(v)-lse))
	}
	logits[label] -= F(scale)
	return nll
}
