// Package latency is the derivation core of docs/latency-guide.md: gap
// classification into the closed stall reasons (Classify), the per-request
// Tracker with its bounded 8192-gap ring, running phase totals and the
// per-token kiln.token_timing event, the request Summary with its null
// rules, and the rolling 60 s decode Window. It is pure: no OpenTelemetry,
// no I/O, no clock reads (every instant is passed in), so the server's
// span processor and the collector connector run the same code.
//
// Decisions the contract leaves to us, kept literal and simple:
//
//   - "unexplained" is not a candidate of the classification, only the
//     fallback when the chosen candidate is shorter than min(250 ms,
//     gap/2); the token event keeps the chosen candidate's duration.
//     An unobserved backend phase is not a candidate (null is not zero).
//   - Instants are clamped so the event invariants always hold: ready
//     never decreases within a request, and each later instant is at
//     least the previous one (a difference saturates at 0).
//   - Phase totals: the actor phases and observed backend phases are the
//     sums of each token's timing.Phases (the first token's interval included:
//     that is where actor_queue, admission and the prefill appear).
//     response_delivery, handler_queue and client_delivery totals are the
//     sums of each token's own hops (delivered-ready, received-delivered,
//     enqueued-received); Phases.ResponseDelivery (the actor delivering
//     during the gap, which includes this request's previous hop) is a
//     classification candidate only, so the hop is not counted twice.
//     client_delivery is null unless a token was streamed (BodyEnqueued
//     set); unexplained is the sum of the per-gap residuals, observed once
//     there is a gap; server-measured phases come from AddPhase.
//
// Concurrency: a Tracker belongs to one request's goroutine and is not
// safe for concurrent use; Reset makes it reusable from a pool. A Window
// is shared and lock-free on its per-token path: Add writes one ring entry
// under a per-entry sequence number and never waits behind Stats, which
// copies the ring without a lock and sorts the copy. Nothing here starts
// a goroutine.
package latency
