package bench

import (
	"fmt"
	"io"
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
// arm.
func WriteTable(w io.Writer, arms []*ArmResult) error {
	if len(arms) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	header := "metric\t"
	for i, a := range arms {
		header += a.Name + "\t"
		if i > 0 {
			header += "ratio\t"
		}
	}
	fmt.Fprintln(tw, header)
	row := func(name string, get func(Stats) float64, format string) {
		line := name + "\t"
		base := get(arms[0].Stats)
		for i, a := range arms {
			v := get(a.Stats)
			line += fmt.Sprintf(format, v) + "\t"
			if i > 0 {
				if base != 0 {
					line += fmt.Sprintf("%.2fx", v/base) + "\t"
				} else {
					line += "-\t"
				}
			}
		}
		fmt.Fprintln(tw, line)
	}
	row("requests", func(s Stats) float64 { return float64(s.Requests) }, "%.0f")
	row("failed", func(s Stats) float64 { return float64(s.Failed) }, "%.0f")
	row("output tok/s", func(s Stats) float64 { return s.OutputTokPerS }, "%.1f")
	row("TTFT p50 ms", func(s Stats) float64 { return s.TTFTP50Ms }, "%.2f")
	row("TTFT p99 ms", func(s Stats) float64 { return s.TTFTP99Ms }, "%.2f")
	row("ITL p50 ms", func(s Stats) float64 { return s.ITLP50Ms }, "%.2f")
	row("ITL p99 ms", func(s Stats) float64 { return s.ITLP99Ms }, "%.2f")
	row("ITL p99.9 ms", func(s Stats) float64 { return s.ITLP999Ms }, "%.2f")
	row("E2E p50 ms", func(s Stats) float64 { return s.E2EP50Ms }, "%.1f")
	row("server stalls", func(s Stats) float64 { return float64(s.ServerStalls) }, "%.0f")
	reasons := map[string]bool{}
	for _, a := range arms {
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
		row("  stalls "+r, func(s Stats) float64 { return float64(s.StallsByReason[r]) }, "%.0f")
	}
	return tw.Flush()
}
