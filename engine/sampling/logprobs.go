package sampling

import (
	"math"

	"github.com/kiln-ai/kiln/kernels"
)

// MaxTopLogprobs is the most alternatives a token reports (OpenAI's
// bound on top_logprobs).
const MaxTopLogprobs = 20

// TokenLogprob is one token's log probability.
type TokenLogprob struct {
	ID      int
	Logprob float32
}

// Logprobs reports log probabilities from the distribution the model gave,
// before any sampling control: no temperature, top-k, top-p, penalty or
// grammar mask changes them (what vLLM calls raw log probabilities). A
// request that asks for them observes each logits row before the controls
// touch it. A Logprobs belongs to one request; it is not safe for
// concurrent use.
type Logprobs struct {
	top  int
	row  []float32 // the observed logits, copied
	exps []float32 // scratch of the normalizer
	logZ float64   // log of the sum of e^logit
	alts []int32   // the top ids, in heap order
	ok   bool      // the row formed a distribution
}

// NewLogprobs returns a reporter of the chosen token and its top
// alternatives (0..MaxTopLogprobs).
func NewLogprobs(top int) *Logprobs {
	return &Logprobs{top: min(max(top, 0), MaxTopLogprobs)}
}

// Observe records the logits row a token is about to be sampled from.
func (l *Logprobs) Observe(logits []float32) {
	if cap(l.row) < len(logits) {
		l.row = make([]float32, len(logits))
		l.exps = make([]float32, len(logits))
	}
	l.row = l.row[:len(logits)]
	copy(l.row, logits)
	l.ok = false
	if len(logits) == 0 {
		return
	}
	maxv := logits[kernels.ArgMax(logits)]
	if maxv != maxv || math.IsInf(float64(maxv), 0) {
		return
	}
	sum := kernels.ExpScaleSum(l.exps[:len(logits)], logits, maxv, 1)
	if !(sum > 0) || math.IsInf(sum, 0) {
		return
	}
	l.logZ = float64(maxv) + math.Log(sum)
	l.ok = true
	if l.top > 0 {
		l.alts = topK(l.alts[:0], l.row, min(l.top, len(l.row)))
	}
}

// Of returns the log probability of id in the observed row and, when top
// alternatives were asked for, a new slice of them, most likely first
// (equal ones by id). A row without a distribution (no finite logit)
// reports -Inf.
func (l *Logprobs) Of(id int) (float32, []TokenLogprob) {
	lp := l.logprob(id)
	if l.top == 0 {
		return lp, nil
	}
	out := make([]TokenLogprob, 0, len(l.alts))
	for _, a := range l.alts {
		out = append(out, TokenLogprob{ID: int(a), Logprob: l.logprob(int(a))})
	}
	sortLogprobs(out)
	return lp, out
}

func (l *Logprobs) logprob(id int) float32 {
	if !l.ok || id < 0 || id >= len(l.row) {
		return float32(math.Inf(-1))
	}
	v := l.row[id]
	if v != v {
		return float32(math.Inf(-1))
	}
	return float32(float64(v) - l.logZ)
}

// sortLogprobs orders alternatives most likely first, equal ones by id
// (an insertion sort: there are at most MaxTopLogprobs).
func sortLogprobs(a []TokenLogprob) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && less(a[j], a[j-1]); j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func less(a, b TokenLogprob) bool {
	if a.Logprob != b.Logprob {
		return a.Logprob > b.Logprob
	}
	return a.ID < b.ID
}
