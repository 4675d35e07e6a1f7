// Package latency is the derivation core of SPEC.md sections 4 to 7: the
// per-request tracker with its bounded gap ring, gap classification into
// the closed stall reasons, the request summary with its null rules, and
// the rolling decode window. It is pure (no OpenTelemetry, no I/O) and
// allocation free per token in steady state.
package latency
