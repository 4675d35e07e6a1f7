package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/internal/testshared"
	"github.com/kiln-ai/kiln/internal/timing"
)

// sharedModel returns the path of a file in ../shared/models, skipping
// the test when it is absent.
func sharedModel(t *testing.T, name string) string {
	t.Helper()
	return testshared.Require(t, "models", name)
}

// start builds and starts an engine, shut down at cleanup.
func start(t *testing.T, b engine.Backend, cfg engine.Config, opts ...engine.Option) *engine.Engine {
	t.Helper()
	e, err := engine.New(b, cfg, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return e
}

// submit submits r or fails the test.
func submit(t *testing.T, e *engine.Engine, ctx context.Context, r engine.Request) *engine.Stream {
	t.Helper()
	s, err := e.Submit(ctx, r)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	return s
}

// drain reads a stream to its end.
func drain(s *engine.Stream) ([]engine.Token, engine.Result) {
	var toks []engine.Token
	for tok := range s.Tokens() {
		toks = append(toks, tok)
	}
	return toks, s.Result()
}

func ids(toks []engine.Token) []int {
	out := make([]int, len(toks))
	for i, t := range toks {
		out[i] = t.ID
	}
	return out
}

// checkPhases asserts the timing invariants of one request's tokens:
// indices in order, ready <= delivered, and no phase, nor the sum of the
// actor's (disjoint) phases, longer than the interval it describes; the
// backend phases sit inside decode.
func checkPhases(t *testing.T, toks []engine.Token, submitted time.Time) {
	t.Helper()
	prev := submitted
	for i, tok := range toks {
		if tok.Index != i {
			t.Errorf("token %d has Index %d", i, tok.Index)
		}
		if tok.Delivered.Before(tok.Ready) {
			t.Errorf("token %d delivered %v before ready %v", i, tok.Delivered, tok.Ready)
		}
		gap := tok.Ready.Sub(prev)
		p := tok.Phases
		if i > 0 && p.ActorQueue != 0 {
			t.Errorf("token %d: actor queue %v after the first token", i, p.ActorQueue)
		}
		sum := p.ActorQueue + p.Admission + p.Prefill + p.Decode + p.CycleIdle + p.ResponseDelivery
		for name, d := range map[string]time.Duration{
			"actor_queue": p.ActorQueue, "admission": p.Admission, "prefill": p.Prefill,
			"decode": p.Decode, "cycle_idle": p.CycleIdle, "response_delivery": p.ResponseDelivery,
			"sum": sum,
		} {
			if d < 0 || d > gap {
				t.Errorf("token %d: %s %v outside [0, gap %v]", i, name, d, gap)
			}
		}
		for s := range timing.NumBackendPhases {
			if p.Backend[s] > p.Decode {
				t.Errorf("token %d: slot %v %v exceeds decode %v", i, s, p.Backend[s], p.Decode)
			}
		}
		if !p.Has(timing.BackendSampling) || !p.Has(timing.BackendGPULockWait) {
			t.Errorf("token %d: sampling and gpu_lock_wait not observed (%b)", i, p.Observed)
		}
		for _, s := range []timing.BackendPhase{timing.BackendReadback, timing.BackendGraphCapture, timing.BackendGraphReplay, timing.BackendSynchronization} {
			if p.Has(s) {
				t.Errorf("token %d: %v observed on the CPU path", i, s)
			}
		}
		checkBlockers(t, i, tok, prev)
		prev = tok.Ready
	}
}

// checkBlockers asserts that a token's blockers lie inside its interval
// [from, Ready], are known kinds, come largest first, and that the unused
// entries are zero.
func checkBlockers(t *testing.T, i int, tok engine.Token, from time.Time) {
	t.Helper()
	if tok.NumBlockers < 0 || tok.NumBlockers > engine.MaxBlockers {
		t.Errorf("token %d: NumBlockers %d", i, tok.NumBlockers)
		return
	}
	for j, b := range tok.Blockers[:tok.NumBlockers] {
		if b.Start.Before(from) || b.End.After(tok.Ready) || b.End.Before(b.Start) {
			t.Errorf("token %d blocker %d: [%v, %v] outside its interval [%v, %v]", i, j, b.Start, b.End, from, tok.Ready)
		}
		switch b.Kind {
		case engine.BlockerPrefill, engine.BlockerLockWait:
			if b.Op != 0 || b.OpKind != 0 {
				t.Errorf("token %d blocker %d: a %v names operation %d (%v)", i, j, b.Kind, b.Op, b.OpKind)
			}
		case engine.BlockerOperation:
			if b.Op == 0 || b.OpKind.String() == "unknown" || b.Request != 0 {
				t.Errorf("token %d blocker %d: an operation blocker %+v", i, j, b)
			}
		default:
			t.Errorf("token %d blocker %d: kind %v", i, j, b.Kind)
		}
		if b.Kind == engine.BlockerLockWait && b.Request != 0 {
			t.Errorf("token %d blocker %d: a lock wait names request %d", i, j, b.Request)
		}
		if j > 0 && b.Duration() > tok.Blockers[j-1].Duration() {
			t.Errorf("token %d blocker %d: %v after a shorter %v", i, j, b.Duration(), tok.Blockers[j-1].Duration())
		}
	}
	for j, b := range tok.Blockers[tok.NumBlockers:] {
		if b != (engine.Blocker{}) {
			t.Errorf("token %d: unused blocker %d is %+v", i, tok.NumBlockers+j, b)
		}
	}
}

func isErr(err, target error) bool { return errors.Is(err, target) }

// trimOp is a trim operation of e's for Exclusive.
func trimOp(e *engine.Engine) *engine.Operation {
	return e.BeginOperation(timing.OpTrim, engine.ReasonMaintenance, 0, nil)
}
