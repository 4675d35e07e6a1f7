package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/kiln-ai/kiln/engine"
)

// exitEngineFailed is the exit status of a `kiln serve` whose engine
// failed beyond recovery (engine.Engine.Failed): distinct from 1 (any
// other error) so that a supervisor or an operator can tell a crash that a
// restart cures from a configuration mistake.
const exitEngineFailed = 3

// exitError carries a specific exit status out of a subcommand.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode is the process's exit status for a subcommand's error.
func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// awaitStop blocks until ctx ends (a signal: a normal shutdown, nil) or
// the engine fails. A failed engine never leaves a live process answering
// 503: its fault is logged with the stack trace and returned as an
// exitError, after which runServe drains the server (bounded by
// --shutdown-grace; every in-flight request has already ended) and exits
// with exitEngineFailed, for a supervisor to restart the process.
func awaitStop(ctx context.Context, eng *engine.Engine, log *zerolog.Logger) error {
	select {
	case <-ctx.Done():
		return nil
	case <-eng.Failed():
	}
	err := eng.Err()
	ev := log.Error().Err(err)
	var f *engine.Fault
	if errors.As(err, &f) {
		ev = ev.Str("stage", f.Stage).Str("stack", string(f.Stack))
	}
	ev.Int("exit_code", exitEngineFailed).Msg("the engine failed and cannot continue: draining, then exiting for a restart")
	return &exitError{code: exitEngineFailed, err: fmt.Errorf("engine failed: %w", err)}
}
