package bench

import (
	"encoding/json"
	"slices"
	"sort"

	"github.com/kiln-ai/kiln/telemetry/latency"
)

// Stats are the like-for-like figures compared across arms.
type Stats struct {
	Requests       int            `json:"requests"`
	Failed         int            `json:"failed"`
	OutputTokens   int            `json:"output_tokens"`
	OutputTokPerS  float64        `json:"output_tokens_per_sec"` // all output tokens / arm wall time
	TTFTP50Ms      float64        `json:"ttft_p50_ms"`
	TTFTP95Ms      float64        `json:"ttft_p95_ms"`
	TTFTP99Ms      float64        `json:"ttft_p99_ms"`
	ITLP50Ms       float64        `json:"itl_p50_ms"` // client inter-chunk gaps
	ITLP99Ms       float64        `json:"itl_p99_ms"`
	ITLP999Ms      float64        `json:"itl_p999_ms"`
	E2EP50Ms       float64        `json:"e2e_p50_ms"`
	ServerStalls   int            `json:"server_stall_count"` // summed from Kiln summaries (adaptive threshold)
	StallsByReason map[string]int `json:"server_stalls_by_reason"`
	ServerSummary  int            `json:"server_summaries"` // requests that carried a Kiln summary

	PromptTokens   int `json:"prompt_tokens"`          // summed over the requests whose usage said
	CachedTokens   int `json:"cached_tokens"`          // prompt tokens the server reused, summed over those that said
	CachedReported int `json:"cached_tokens_reported"` // requests that reported a cached count (0: the server never said)

	// Turns are per-turn figures of a conversation workload, turn 1 first.
	Turns []TurnStats `json:"turns,omitempty"`
}

// TurnStats are one turn's figures over the conversations of a run:
// medians over its successful requests (with one conversation, its
// values).
type TurnStats struct {
	Turn            int      `json:"turn"`
	Requests        int      `json:"requests"`
	Failed          int      `json:"failed"`
	TTFTP50Ms       float64  `json:"ttft_p50_ms"`
	E2EP50Ms        float64  `json:"e2e_p50_ms"`
	OutputTokensP50 float64  `json:"output_tokens_p50"`
	PromptTokensP50 *float64 `json:"prompt_tokens_p50"` // null when no request's usage said
	CachedTokensP50 *float64 `json:"cached_tokens_p50"` // null when no request reported one
}

// Summarize computes an arm's Stats from its samples.
func Summarize(samples []Sample, wallMs float64) Stats {
	st := Stats{Requests: len(samples), StallsByReason: map[string]int{}}
	var ttft, itl, e2e []float64
	for i := range samples {
		s := &samples[i]
		if s.Error != "" {
			st.Failed++
			continue
		}
		st.OutputTokens += s.OutputTokens
		if s.PromptTokens != nil {
			st.PromptTokens += *s.PromptTokens
		}
		if s.CachedTokens != nil {
			st.CachedTokens += *s.CachedTokens
			st.CachedReported++
		}
		if s.TTFTMs != nil {
			ttft = append(ttft, *s.TTFTMs)
		}
		itl = append(itl, s.GapsMs...)
		e2e = append(e2e, s.E2EMs)
		if s.Server != nil && len(s.Server.Latency) > 0 {
			var lat struct {
				StallCount   int            `json:"stall_count"`
				StallReasons map[string]int `json:"stall_reasons"`
			}
			if json.Unmarshal(s.Server.Latency, &lat) == nil {
				st.ServerSummary++
				st.ServerStalls += lat.StallCount
				for r, n := range lat.StallReasons {
					if n > 0 {
						st.StallsByReason[r] += n
					}
				}
			}
		}
	}
	sort.Float64s(ttft)
	sort.Float64s(itl)
	sort.Float64s(e2e)
	st.TTFTP50Ms, st.TTFTP95Ms, st.TTFTP99Ms = latency.Percentile(ttft, 0.5), latency.Percentile(ttft, 0.95), latency.Percentile(ttft, 0.99)
	st.ITLP50Ms, st.ITLP99Ms, st.ITLP999Ms = latency.Percentile(itl, 0.5), latency.Percentile(itl, 0.99), latency.Percentile(itl, 0.999)
	st.E2EP50Ms = latency.Percentile(e2e, 0.5)
	if wallMs > 0 {
		st.OutputTokPerS = float64(st.OutputTokens) / (wallMs / 1000)
	}
	st.Turns = summarizeTurns(samples)
	return st
}

// summarizeTurns groups the samples of conversations (Turn > 0) by turn.
func summarizeTurns(samples []Sample) []TurnStats {
	last := 0
	for i := range samples {
		last = max(last, samples[i].Turn)
	}
	if last == 0 {
		return nil
	}
	out := make([]TurnStats, last)
	type values struct{ ttft, e2e, output, prompt, cached []float64 }
	vals := make([]values, last)
	for i := range samples {
		s := &samples[i]
		if s.Turn == 0 {
			continue
		}
		t, v := &out[s.Turn-1], &vals[s.Turn-1]
		t.Requests++
		if s.Error != "" {
			t.Failed++
			continue
		}
		if s.TTFTMs != nil {
			v.ttft = append(v.ttft, *s.TTFTMs)
		}
		v.e2e = append(v.e2e, s.E2EMs)
		v.output = append(v.output, float64(s.OutputTokens))
		if s.PromptTokens != nil {
			v.prompt = append(v.prompt, float64(*s.PromptTokens))
		}
		if s.CachedTokens != nil {
			v.cached = append(v.cached, float64(*s.CachedTokens))
		}
	}
	median := func(xs []float64) float64 {
		sort.Float64s(xs)
		return latency.Percentile(xs, 0.5)
	}
	orNull := func(xs []float64) *float64 {
		if len(xs) == 0 {
			return nil
		}
		m := median(xs)
		return &m
	}
	for i := range out {
		v := &vals[i]
		out[i].Turn = i + 1
		out[i].TTFTP50Ms, out[i].E2EP50Ms, out[i].OutputTokensP50 = median(v.ttft), median(v.e2e), median(v.output)
		out[i].PromptTokensP50, out[i].CachedTokensP50 = orNull(v.prompt), orNull(v.cached)
	}
	return out
}

func sortBySeq(s []Sample) {
	slices.SortFunc(s, func(a, b Sample) int { return a.Seq - b.Seq })
}
