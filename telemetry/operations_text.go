package telemetry

import (
	"fmt"
	"strings"

	"github.com/kiln-ai/kiln/internal/timing"
)

// Describe is one line a person reads about an operation (the Maintenance
// panel, a stalled gap's blocker in the diagnosis record, the log): its
// kind and what it did, sizes and counts, never request content.
func Describe(op *timing.Operation) string {
	switch op.Kind {
	case timing.OpTrim:
		d := &op.Trim
		s := fmt.Sprintf("trim, freed %s (rss %s -> %s)", humanBytes(d.Freed()), humanBytes(d.RSSBefore), humanBytes(d.RSSAfter))
		if d.PrefixBlocks > 0 {
			s += fmt.Sprintf(", %d cached prefix blocks dropped", d.PrefixBlocks)
		}
		return s
	case timing.OpResize:
		d := &op.Resize
		if op.End.IsZero() || op.Err != nil {
			return fmt.Sprintf("KV resize to %d tokens", d.RequestedTokens)
		}
		return fmt.Sprintf("KV resize, %s %d -> %d tokens (%d -> %d slots)", d.Direction(), d.FromTokens, d.ActualTokens, d.FromSlots, d.Slots)
	case timing.OpAdapterSwap:
		from := op.Swap.From
		if from == "" {
			from = "?"
		}
		return fmt.Sprintf("adapter swap, %s -> %s", from, op.Swap.To)
	case timing.OpTrainingJob:
		tr := &op.Training
		return fmt.Sprintf("training job %s, %d steps over %d tokens", tr.Job, tr.Steps, tr.Tokens)
	}
	return describeStep(op)
}

// describeStep reads, for example, "training step 3 of 4, job train-1,
// 212 tokens, loss 7.27, 9 slices".
func describeStep(op *timing.Operation) string {
	tr := &op.Training
	var b strings.Builder
	fmt.Fprintf(&b, "training step %d of %d, job %s, %d tokens", tr.Step, tr.Steps, tr.Job, tr.Tokens)
	if !op.End.IsZero() && op.Err == nil {
		fmt.Fprintf(&b, ", loss %.3g", tr.Loss)
	}
	if tr.Slices > 1 {
		fmt.Fprintf(&b, ", %d slices", tr.Slices)
	}
	return b.String()
}

// humanBytes is n in B, KB, MB or GB (powers of 1000, one decimal).
func humanBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// logOperation writes the operation's log line: what it was, its result,
// its timing, and its span's trace id.
func (t *Telemetry) logOperation(op *timing.Operation, summary string) {
	ev := t.log.Info()
	if op.Err != nil {
		ev = t.log.Warn().Err(op.Err)
	}
	ev = ev.Str("operation", op.Kind.String()).Uint64("operation_id", op.ID).Str("reason", op.Reason).
		Str("outcome", op.Outcome).Float64("hold_ms", timing.Ms(op.Hold)).Float64("duration_ms", timing.Ms(timing.Elapsed(op.Start, op.End))).
		Float64("wait_ms", timing.Ms(timing.Elapsed(op.Queued, op.Start)))
	switch op.Kind {
	case timing.OpTrim:
		d := &op.Trim
		ev = ev.Int64("reclaimed_bytes", d.Freed()).Int64("backend_bytes", d.BackendBytes).Int("prefix_blocks", d.PrefixBlocks).
			Int64("heap_released_bytes", d.HeapReleased).Int64("rss_before_bytes", d.RSSBefore).Int64("rss_after_bytes", d.RSSAfter)
	case timing.OpResize:
		d := &op.Resize
		ev = ev.Str("direction", d.Direction()).Int("from_tokens", d.FromTokens).Int("requested_tokens", d.RequestedTokens).
			Int("actual_tokens", d.ActualTokens).Int("from_slots", d.FromSlots).Int("slots", d.Slots).
			Int64("bytes_before", d.BytesBefore).Int64("bytes_after", d.BytesAfter).Int64("dropped_bytes", d.DroppedBytes).
			Int64("rss_before_bytes", d.RSSBefore).Int64("rss_after_bytes", d.RSSAfter).
			Float64("drain_ms", timing.Ms(timing.Elapsed(d.Accepted, op.Start)))
	case timing.OpAdapterSwap:
		ev = ev.Str("from", op.Swap.From).Str("to", op.Swap.To).Str("revision", op.Swap.Revision)
	case timing.OpTrainingJob, timing.OpTrainingStep:
		tr := &op.Training
		ev = ev.Str("job_id", tr.Job).Int("step", tr.Step).Int("steps", tr.Steps).Int("slices", tr.Slices)
		if tr.Status != "" {
			ev = ev.Str("status", tr.Status)
		}
	}
	ev.Str("summary", summary).Msg(opLogMessages[op.Kind])
}

// opLogMessages is each kind's log message: fixed, so that a search finds
// every operation of a kind; what it did is in the summary field.
var opLogMessages = [...]string{timing.OpTrim: "trim", timing.OpResize: "kv resize", timing.OpAdapterSwap: "adapter swap",
	timing.OpTrainingStep: "training step", timing.OpTrainingJob: "training job ended"}
