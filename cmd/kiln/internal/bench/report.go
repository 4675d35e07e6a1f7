package bench

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// Bar is a Progress that redraws one line on a terminal, or prints a plain
// line at every tenth of the run otherwise.
type Bar struct {
	W        io.Writer
	Terminal bool
	Label    string
	lastTick int
}

// Update implements Progress.
func (b *Bar) Update(done, total, failed int) {
	if b.Terminal {
		if total > 0 {
			const width = 30
			fill := done * width / total
			fmt.Fprintf(b.W, "\r%s [%s%s] %d/%d failed %d", b.Label,
				strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, failed)
		} else {
			fmt.Fprintf(b.W, "\r%s %d done, failed %d", b.Label, done, failed)
		}
		return
	}
	tick := done / 10
	if total > 0 {
		tick = done * 10 / total
	}
	if tick != b.lastTick || done == total {
		b.lastTick = tick
		fmt.Fprintf(b.W, "%s: %d/%d done, %d failed\n", b.Label, done, total, failed)
	}
}

// Finish implements Progress.
func (b *Bar) Finish() {
	if b.Terminal {
		fmt.Fprintln(b.W)
	}
}

// WriteTable prints arms side by side with each metric's ratio to the first
// arm. A figure an arm's server did not report is n/a.
func WriteTable(w io.Writer, arms []*ArmResult) error {
	if len(arms) == 0 {
		return nil
	}
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight), arms: arms}
	t.header()
	t.latencyRows()
	t.prefixCacheRows()
	t.stallRows()
	return t.tw.Flush()
}

// table is the comparison table of WriteTable: a column per arm, and a
// ratio to the first arm beside each later one.
type table struct {
	tw   *tabwriter.Writer
	arms []*ArmResult
}

func (t *table) header() {
	header := "metric\t"
	for i, a := range t.arms {
		header += a.Name + "\t"
		if i > 0 {
			header += "ratio\t"
		}
	}
	fmt.Fprintln(t.tw, header)
}

// maybe prints a row whose figure an arm may lack (ok false: n/a).
func (t *table) maybe(name string, get func(*ArmResult) (float64, bool), format string) {
	line := name + "\t"
	base, baseOK := get(t.arms[0])
	for i, a := range t.arms {
		v, ok := get(a)
		if ok {
			line += fmt.Sprintf(format, v) + "\t"
		} else {
			line += "n/a\t"
		}
		if i > 0 {
			if ok && baseOK && base != 0 {
				line += fmt.Sprintf("%.2fx", v/base) + "\t"
			} else {
				line += "-\t"
			}
		}
	}
	fmt.Fprintln(t.tw, line)
}

// row prints a row of a figure every arm has.
func (t *table) row(name string, get func(Stats) float64, format string) {
	t.maybe(name, func(a *ArmResult) (float64, bool) { return get(a.Stats), true }, format)
}

// latencyRows are the counts, throughput, latency percentiles and tokens.
func (t *table) latencyRows() {
	t.row("requests", func(s Stats) float64 { return float64(s.Requests) }, "%.0f")
	t.row("failed", func(s Stats) float64 { return float64(s.Failed) }, "%.0f")
	t.row("output tok/s", func(s Stats) float64 { return s.OutputTokPerS }, "%.1f")
	t.row("TTFT p50 ms", func(s Stats) float64 { return s.TTFTP50Ms }, "%.2f")
	t.row("TTFT p95 ms", func(s Stats) float64 { return s.TTFTP95Ms }, "%.2f")
	t.row("TTFT p99 ms", func(s Stats) float64 { return s.TTFTP99Ms }, "%.2f")
	t.row("ITL p50 ms", func(s Stats) float64 { return s.ITLP50Ms }, "%.2f")
	t.row("ITL p99 ms", func(s Stats) float64 { return s.ITLP99Ms }, "%.2f")
	t.row("ITL p99.9 ms", func(s Stats) float64 { return s.ITLP999Ms }, "%.2f")
	t.row("E2E p50 ms", func(s Stats) float64 { return s.E2EP50Ms }, "%.1f")
	t.maybe("prompt tokens", func(a *ArmResult) (float64, bool) {
		return float64(a.Stats.PromptTokens), a.Stats.PromptTokens > 0
	}, "%.0f")
	t.maybe("cached tokens", func(a *ArmResult) (float64, bool) {
		return float64(a.Stats.CachedTokens), a.Stats.CachedReported > 0
	}, "%.0f")
}

// prefixCacheRows are the prefix cache's memory, when an arm watched it.
func (t *table) prefixCacheRows() {
	if !slices.ContainsFunc(t.arms, func(a *ArmResult) bool { return a.PrefixCache != nil }) {
		return
	}
	mib := func(get func(*PrefixCacheWatch) *int64) func(*ArmResult) (float64, bool) {
		return func(a *ArmResult) (float64, bool) {
			if a.PrefixCache == nil {
				return 0, false
			}
			p := get(a.PrefixCache)
			if p == nil {
				return 0, false
			}
			return float64(*p) / (1 << 20), true
		}
	}
	t.maybe("prefix cache MiB, peak", mib(func(w *PrefixCacheWatch) *int64 { return w.PeakBytes }), "%.2f")
	t.maybe("prefix cache MiB, after", mib(func(w *PrefixCacheWatch) *int64 { return w.After.Bytes }), "%.2f")
	t.maybe("  of which idle", mib(func(w *PrefixCacheWatch) *int64 { return w.After.IdleBytes }), "%.2f")
}

// stallRows are the server's stalls, in all and by every reason any arm saw.
func (t *table) stallRows() {
	t.row("server stalls", func(s Stats) float64 { return float64(s.ServerStalls) }, "%.0f")
	reasons := map[string]bool{}
	for _, a := range t.arms {
		for r := range a.Stats.StallsByReason {
			reasons[r] = true
		}
	}
	names := make([]string, 0, len(reasons))
	for r := range reasons {
		names = append(names, r)
	}
	sort.Strings(names)
	for _, r := range names {
		t.row("  stalls "+r, func(s Stats) float64 { return float64(s.StallsByReason[r]) }, "%.0f")
	}
}

// WriteTurns prints each conversation arm's figures turn by turn; it
// prints nothing for arms without turns.
func WriteTurns(w io.Writer, arms []*ArmResult) error {
	for _, a := range arms {
		if len(a.Stats.Turns) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s, by turn (medians over conversations):\n", a.Name)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "turn\trequests\tfailed\tTTFT ms\tprompt tokens\tcached tokens\toutput tokens\tE2E ms\t")
		na := func(p *float64) string {
			if p == nil {
				return "n/a"
			}
			return fmt.Sprintf("%.0f", *p)
		}
		for _, t := range a.Stats.Turns {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%.1f\t%s\t%s\t%.0f\t%.1f\t\n", t.Turn, t.Requests, t.Failed, t.TTFTP50Ms,
				na(t.PromptTokensP50), na(t.CachedTokensP50), t.OutputTokensP50, t.E2EP50Ms)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
