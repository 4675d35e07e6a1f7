package engine

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/kiln-ai/kiln/engine/sampling"
)

// The failure model. A panic while serving one request (in its sampler)
// fails that request alone: its stream ends with FinishError and a *Fault,
// and the engine carries on. A panic anywhere else in the actor (the
// forward pass, whose shared KV state may be corrupt, admission, delivery)
// or maxConsecutiveFaults request faults in a row leave the engine unable
// to continue: every request ends with FinishError, the engine stops being
// Ready, and Failed is closed so that the process can drain and exit for a
// supervisor to restart it. A live process with a dead engine is never the
// intended end state.

// maxConsecutiveFaults request faults with no successful sample between
// them are taken as a broken engine rather than bad requests.
const maxConsecutiveFaults = 8

// ErrFault is wrapped by every *Fault.
var ErrFault = errors.New("engine: internal fault")

// Stages of a Fault.
const (
	StageSample = "sample" // a request fault: that request alone failed
	StageActor  = "actor"  // an engine fault: the engine failed
)

// Fault is a recovered panic: the Result.Err of a request that a fault
// failed, and Engine.Err once the engine failed. Stack is the panicking
// goroutine's stack trace, for the log.
type Fault struct {
	Stage string // StageSample or StageActor
	Value any    // what was passed to panic
	Stack []byte
}

func (f *Fault) Error() string {
	return fmt.Sprintf("engine: internal fault in %s: %v", f.Stage, f.Value)
}

// Unwrap makes errors.Is(err, ErrFault) hold.
func (f *Fault) Unwrap() error { return ErrFault }

func newFault(stage string, v any) *Fault {
	return &Fault{Stage: stage, Value: v, Stack: debug.Stack()}
}

// FaultHooks inject faults, for tests only: production code never sets
// them. Sample runs before each request's sampling with its parameters (a
// panic there is a request fault); Forward runs before each forward pass
// (a panic there is an engine fault).
type FaultHooks struct {
	Sample  func(sampling.Params)
	Forward func()
}

// WithFaultHooks installs h. Test-only.
func WithFaultHooks(h FaultHooks) Option {
	return func(e *Engine) { e.hooks = h }
}

// Failed is closed when the engine failed beyond recovery (never on a
// normal Shutdown). Err then says why.
func (e *Engine) Failed() <-chan struct{} { return e.failed }

// Err is the *Fault that failed the engine, nil while it has not failed.
func (e *Engine) Err() error {
	if f := e.fault.Load(); f != nil {
		return f
	}
	return nil
}

// fail records f as the engine's fatal fault and ends every request; the
// actor exits after it.
func (a *actor) fail(f *Fault) {
	e := a.e
	e.alive.Store(false)
	a.failAll(f, false)
	a.publish()
	if e.fault.CompareAndSwap(nil, f) {
		close(e.failed)
	}
}

// sampleOne draws r's next token from its logits row. A panic fails r
// alone (the caller ends it with the returned *Fault), unless it is the
// maxConsecutiveFaults-th in a row, which panics on to fail the engine.
func (a *actor) sampleOne(r *request) (id int, err error) {
	defer func() {
		if p := recover(); p != nil {
			a.faultRun++
			if a.faultRun >= maxConsecutiveFaults {
				panic(fmt.Sprintf("%d request faults in a row, the last: %v", a.faultRun, p))
			}
			err = newFault(StageSample, p)
		}
	}()
	if h := a.e.hooks.Sample; h != nil {
		h(r.sampler.Params())
	}
	row := a.slotBuf[r.slot]
	if r.logprobs != nil {
		r.logprobs.Observe(row)
	}
	if r.constr != nil {
		r.constr.Mask(row, r.maxGen-r.generated)
	}
	id = r.sampler.Sample(row)
	if r.constr != nil {
		if err := r.constr.Accept(id); err != nil {
			return 0, newFault(StageSample, err)
		}
	}
	if r.logprobs != nil {
		r.lastLP, r.lastTop = r.logprobs.Of(id)
	}
	a.faultRun = 0
	return id, nil
}
