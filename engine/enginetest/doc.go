// Package enginetest holds fakes for tests of the engine and its callers: a
// deterministic Backend whose logits depend only on each slot's token
// history (so batching must be invisible to results), with optional delays
// and a hook before every forward pass, and a small random-weight Llama
// model.
//
// Goroutines: none. The fake Backend is called by the engine's actor and
// read by the test goroutine; it guards its state with a mutex and sleeps
// with time.Sleep, so under testing/synctest its delays are exact.
package enginetest
