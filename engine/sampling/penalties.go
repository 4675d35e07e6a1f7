package sampling

import "math"

// Logit adjustments applied before a token is chosen, greedy or sampled:
// logit_bias, the repetition penalty (over the prompt and the generated
// tokens), the frequency and presence penalties (over the generated tokens
// only) and the min_p cut. Each follows the definition its name has in the
// OpenAI API, or for the two parameters OpenAI lacks, in the vLLM and
// llama.cpp servers:
//
//   - logit_bias: logit[id] += bias.
//   - repetition_penalty r (Hugging Face/llama.cpp): a token seen in the
//     prompt or the completion has a positive logit divided by r and a
//     negative one multiplied by r; r = 1 (or 0, unset) is off.
//   - frequency_penalty f, presence_penalty p (OpenAI): logit[id] -=
//     count[id]*f + (count[id] > 0 ? p : 0), count being the id's
//     occurrences in the tokens generated so far.
//   - min_p m: a token whose probability is below m times the most probable
//     token's is dropped. It is applied to the adjusted logits before the
//     temperature (as llama.cpp's default chain does), where it is the cut
//     logit < max + ln(m).
//
// The counts are allocated once per request, on its first token, and only
// when a penalty is set; the per-token work touches only the ids the
// request has seen, plus one pass over the vocabulary for min_p.

// penalties is a sampler's per-request record of the tokens it has seen.
type penalties struct {
	prompt  []int    // the request's prompt, read on the first token
	counts  []int32  // generated occurrences by token id; nil until the first token
	seen    []uint64 // bit per id: in the prompt or generated
	touched []int32  // the ids with their seen bit set, in first-seen order
}

// init sizes the record for a vocabulary of n ids and marks the prompt.
func (p *penalties) init(n int) {
	p.counts = make([]int32, n)
	p.seen = make([]uint64, (n+63)/64)
	p.touched = make([]int32, 0, n)
	for _, id := range p.prompt {
		if id >= 0 && id < n {
			p.mark(int32(id))
		}
	}
	p.prompt = nil
}

func (p *penalties) mark(id int32) {
	w, bit := id/64, uint64(1)<<(id%64)
	if p.seen[w]&bit == 0 {
		p.seen[w] |= bit
		p.touched = append(p.touched, id)
	}
}

// record counts a generated token.
func (p *penalties) record(id int) {
	if p.counts == nil || id < 0 || id >= len(p.counts) {
		return
	}
	p.counts[id]++
	p.mark(int32(id))
}

// apply adjusts logits in place by cfg's bias, penalties and min_p cut.
func (p *penalties) apply(cfg *Params, logits []float32) {
	if p.counts == nil {
		p.init(len(logits))
	}
	for _, b := range cfg.LogitBias {
		if b.ID < len(logits) {
			logits[b.ID] += b.Bias
		}
	}
	rep, freq, pres := cfg.RepetitionPenalty, cfg.FrequencyPenalty, cfg.PresencePenalty
	if cfg.repetition() || freq != 0 || pres != 0 {
		for _, id := range p.touched {
			v := logits[id]
			if cfg.repetition() {
				if v > 0 {
					v /= rep
				} else {
					v *= rep
				}
			}
			if c := p.counts[id]; c > 0 {
				v -= float32(c)*freq + pres
			}
			logits[id] = v
		}
	}
	if cfg.MinP > 0 {
		minPCut(logits, cfg.MinP)
	}
}

// minPCut sets to -Inf every logit whose softmax probability is below m
// times the largest one's: logit < max + ln(m). The largest stays.
func minPCut(logits []float32, m float32) {
	maxv := float32(math.Inf(-1))
	for _, v := range logits {
		maxv = max(maxv, v)
	}
	cut := maxv + float32(math.Log(float64(m)))
	neg := float32(math.Inf(-1))
	for i, v := range logits {
		if v < cut {
			logits[i] = neg
		}
	}
}
