package engine_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
	"github.com/kiln-ai/kiln/internal/timing"
)

// opRecorder keeps copies of the records an engine reports.
type opRecorder struct {
	mu           sync.Mutex
	began, ended []timing.Operation
}

func (r *opRecorder) OperationBegan(op *timing.Operation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.began = append(r.began, *op)
}

func (r *opRecorder) OperationEnded(op *timing.Operation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, *op)
}

// endedOp returns the ended record of id.
func (r *opRecorder) endedOp(t *testing.T, id uint64) timing.Operation {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, op := range r.ended {
		if op.ID == id {
			return op
		}
	}
	t.Fatalf("operation %d never ended (ended: %+v)", id, r.ended)
	return timing.Operation{}
}

// opBlockers returns the operation blockers of toks.
func opBlockers(toks []engine.Token) []engine.Blocker {
	var out []engine.Blocker
	for _, tok := range toks {
		for _, b := range tok.Blockers[:tok.NumBlockers] {
			if b.Kind == engine.BlockerOperation {
				out = append(out, b)
			}
		}
	}
	return out
}

// TestTrimNamedInBlockers: the token whose gap a trim delayed names the
// trim's operation by its identity, for exactly the trim's hold, and the
// observer sees the trim begin and end with what it freed.
func TestTrimNamedInBlockers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step, work = 5 * time.Millisecond, 30 * time.Millisecond
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay, b.ReclaimDelay, b.ReclaimBytes = step, work, 4096
		rec := &opRecorder{}
		e := start(t, b, engine.Config{}, engine.WithObserver(rec))
		s := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 6})
		<-s.Tokens()
		synctest.Wait()
		res, err := e.Trim(t.Context(), engine.ReasonAutomatic)
		if err != nil {
			t.Fatal(err)
		}
		toks, _ := drain(s)
		bs := opBlockers(toks)
		if len(bs) != 1 || bs[0].Op != res.Op || bs[0].OpKind != timing.OpTrim || bs[0].Duration() != work {
			t.Fatalf("operation blockers %+v, want one of trim %d lasting %v", bs, res.Op, work)
		}
		op := rec.endedOp(t, res.Op)
		if op.Kind != timing.OpTrim || op.Reason != engine.ReasonAutomatic || op.Outcome != engine.OutcomeReclaimed ||
			op.Hold != work || op.Trim.BackendBytes != 4096 || !op.Start.Equal(bs[0].Start) {
			t.Errorf("trim record %+v", op)
		}
		if len(rec.began) != 1 || rec.began[0].ID != res.Op || !rec.began[0].End.IsZero() {
			t.Errorf("began %+v, want the trim once, not yet ended", rec.began)
		}
	})
}

// TestSlicedHoldsNamed: an operation that holds ownership in several
// slices (a training step) is named by every gap one of its slices
// delayed, and its record sums the slices.
func TestSlicedHoldsNamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const step, slice = 2 * time.Millisecond, 40 * time.Millisecond
		b := enginetest.NewBackend(1, 256, 64)
		b.StepDelay = step
		rec := &opRecorder{}
		e := start(t, b, engine.Config{}, engine.WithObserver(rec))
		s := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 40})
		<-s.Tokens()
		op := e.BeginOperation(timing.OpTrainingStep, "sft", 7, func(op *engine.Operation) { op.Training.Step = 3 })
		for range 3 {
			if err := e.Exclusive(t.Context(), op, func() error { time.Sleep(slice); return nil }); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * step) // the actor runs between two slices
		}
		e.EndOperation(op, nil)
		toks, _ := drain(s)
		bs := opBlockers(toks)
		if len(bs) != 3 {
			t.Fatalf("operation blockers %+v, want one per slice", bs)
		}
		for _, b := range bs {
			if b.Op != op.ID || b.OpKind != timing.OpTrainingStep || b.Duration() != slice {
				t.Errorf("blocker %+v, want step %d for %v", b, op.ID, slice)
			}
		}
		got := rec.endedOp(t, op.ID)
		if got.Hold != 3*slice || got.Parent != 7 || got.Training.Step != 3 || got.Outcome != timing.OutcomeOK {
			t.Errorf("record %+v, want hold %v, parent 7, step 3, ok", got, 3*slice)
		}
		gaps := lockGaps(toks)
		if len(gaps) != 3 {
			t.Fatalf("gaps with a lock wait %+v, want 3", gaps)
		}
	})
}

// TestBarrierNamedInBlockers: a request queued behind a KV resize names
// the resize among its first token's blockers, for the part of the
// barrier interval after it arrived.
func TestBarrierNamedInBlockers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := enginetest.NewBackend(2, 256, 64)
		b.StepDelay = 5 * time.Millisecond
		rec := &opRecorder{}
		e := start(t, b, engine.Config{KVMaxTokens: 1024}, engine.WithObserver(rec))
		busy := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 10})
		<-busy.Tokens()
		done := make(chan engine.ResizeResult, 1)
		go func() {
			res, err := e.ResizeKV(context.Background(), 512, engine.ReasonMaintenance)
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		synctest.Wait()
		time.Sleep(time.Millisecond)
		queued := submit(t, e, t.Context(), engine.Request{Prompt: []int{1}, MaxTokens: 2})
		drain(busy)
		toks, r := drain(queued)
		res := <-done
		bs := opBlockers(toks[:1])
		if len(bs) != 1 || bs[0].Op != res.Op || bs[0].OpKind != timing.OpResize || bs[0].Start.Before(r.Submitted) {
			t.Fatalf("first token's operation blockers %+v, want resize %d from the request's arrival", bs, res.Op)
		}
		op := rec.endedOp(t, res.Op)
		if op.Resize.ActualTokens != 512 || op.Outcome != timing.OutcomeOK || !op.End.Equal(bs[0].End) {
			t.Errorf("resize record %+v", op)
		}
	})
}
