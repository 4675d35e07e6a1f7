package train

import "math"

// lossChunk is how many target rows the classifier handles at a time, which
// bounds the logits held at once to lossChunk x Vocab.
const lossChunk = 16

// lossRows runs the classifier over the target rows rows[s.lo:s.hi]
// (positions t whose next token ids[t+1] is a target), lossChunk rows at a
// time: it adds each row's share of the mean cross-entropy over all of rows
// to *loss, in order, and writes the gradient of that mean with respect to
// the row of a.xf into the row of bs.dxf (whose other rows stay as they
// are: the first loss unit clears them).
func (nt *net[F]) lossRows(ids, rows []int, s span, loss *float64) {
	c := nt.c
	d, vocab := c.Dim, c.Vocab
	bs := &nt.bs
	if len(bs.logits) < lossChunk*vocab {
		bs.logits = make([]F, lossChunk*vocab)
		bs.xc = make([]F, lossChunk*d)
		bs.dxc = make([]F, lossChunk*d)
	}
	norm := 1 / float64(len(rows))
	for lo := s.lo; lo < s.hi; lo += lossChunk {
		chunk := rows[lo:min(lo+lossChunk, s.hi)]
		k := len(chunk)
		for i, t := range chunk {
			copy(bs.xc[i*d:(i+1)*d], nt.a.xf[t*d:(t+1)*d])
		}
		logits := bs.logits[:k*vocab]
		nt.la.matmul(logits, nt.m.Output, bs.xc[:k*d], k)
		for i, t := range chunk {
			*loss += norm * softmaxGrad(logits[i*vocab:(i+1)*vocab], ids[t+1], norm)
		}
		dxc := bs.dxc[:k*d]
		clear(dxc)
		nt.la.matmulT(dxc, nt.m.Output, logits, k)
		for i, t := range chunk {
			copy(bs.dxf[t*d:(t+1)*d], dxc[i*d:(i+1)*d])
		}
	}
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
