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
	TTFTP99Ms      float64        `json:"ttft_p99_ms"`
	ITLP50Ms       float64        `json:"itl_p50_ms"` // client inter-chunk gaps
	ITLP99Ms       float64        `json:"itl_p99_ms"`
	ITLP999Ms      float64        `json:"itl_p999_ms"`
	E2EP50Ms       float64        `json:"e2e_p50_ms"`
	ServerStalls   int            `json:"server_stall_count"` // summed from Kiln summaries (adaptive threshold)
	StallsByReason map[string]int `json:"server_stalls_by_reason"`
	ServerSummary  int            `json:"server_summaries"` // requests that carried a Kiln summary
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
	st.TTFTP50Ms, st.TTFTP99Ms = latency.Percentile(ttft, 0.5), latency.Percentile(ttft, 0.99)
	st.ITLP50Ms, st.ITLP99Ms, st.ITLP999Ms = latency.Percentile(itl, 0.5), latency.Percentile(itl, 0.99), latency.Percentile(itl, 0.999)
	st.E2EP50Ms = latency.Percentile(e2e, 0.5)
	if wallMs > 0 {
		st.OutputTokPerS = float64(st.OutputTokens) / (wallMs / 1000)
	}
	return st
}

func sortBySeq(s []Sample) {
	slices.SortFunc(s, func(a, b Sample) int { return a.Seq - b.Seq })
}
