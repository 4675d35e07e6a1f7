package telemetry

// The trace contract (schemas/trace-contract.md): every span name and
// attribute key Kiln emits. schemas documents these; keep both in step.
const (
	// ScopeName is the instrumentation scope of Kiln's tracer and meter.
	ScopeName = "github.com/kiln-ai/kiln/telemetry"

	// SpanChatPrefix + model is the request span ("chat {model}", GenAI
	// conventions), a child of the otelhttp server span.
	SpanChatPrefix = "chat "
	// SpanActorQueue covers Submitted to Admitted (engine instants).
	SpanActorQueue = "kiln.actor_queue"
	// SpanActorAdmission covers Admitted to AdmissionDone: the actor's
	// admission pass that admitted the request (engine instants).
	SpanActorAdmission = "kiln.actor_admission"
	// SpanActorPrefill covers Admitted to PrefillDone (engine instants).
	SpanActorPrefill = "kiln.actor_prefill"
	// SpanActorDecode covers PrefillDone to the last token's Ready (engine
	// instants); absent without a token.
	SpanActorDecode = "kiln.actor_decode"
	// SpanTokenization is a server-measured phase (Request.Phase); other
	// server-measured phases are named "kiln." + the phase name.
	SpanTokenization = "kiln.tokenization"
	// SpanStall is a short span per stalled gap (gap >= 250 ms): it starts
	// at the previous token's ready instant and ends at this one's. Its
	// links point at the chat spans of the requests whose prefill blocked
	// the gap (LinkKindActorPrefill).
	SpanStall = "kiln.stall"
	// EventBlockerLockWait is a stall span event per ownership wait inside
	// the gap, at the wait's start, with AttrBlockerStartOffsetMs and
	// AttrBlockerDurationMs.
	EventBlockerLockWait = "kiln.blocker.lock_wait"
)

// GenAI semantic-convention attributes on the chat span.
const (
	AttrGenAIOperationName         = "gen_ai.operation.name" // "chat"
	AttrGenAIRequestModel          = "gen_ai.request.model"
	AttrGenAIUsageInputTokens      = "gen_ai.usage.input_tokens"
	AttrGenAIUsageOutputTokens     = "gen_ai.usage.output_tokens"
	AttrGenAIResponseFinishReasons = "gen_ai.response.finish_reasons" // string array
	AttrGenAIProviderName          = "gen_ai.provider.name"           // ProviderName
	// AttrErrorType (the general semantic conventions' error.type) is set
	// when a request did not end ok: its outcome (error, timeout,
	// client_disconnect), as the span status is Error then.
	AttrErrorType = "error.type"
	// AttrGenAIUsageCacheReadInputTokens is the prompt tokens served from
	// the prefix cache (semantic conventions v1.40 and later, in
	// development like the other gen_ai.usage keys), included in
	// AttrGenAIUsageInputTokens; always set, 0 when nothing was reused.
	AttrGenAIUsageCacheReadInputTokens = "gen_ai.usage.cache_read.input_tokens"
)

// ProviderName is gen_ai.provider.name: Kiln serves its own models, so it
// names itself as the provider.
const ProviderName = "kiln"

// Operation names (gen_ai.operation.name) of the request span; the span
// is named "{operation} {model}".
const (
	OperationChat           = "chat"
	OperationTextCompletion = "text_completion"
)

// The wire formats a request can come in (kiln.request.api): a closed set.
const (
	APIChatCompletions = "chat_completions" // POST /v1/chat/completions
	APICompletions     = "completions"      // POST /v1/completions
	APIResponses       = "responses"        // POST /v1/responses
	APIMessages        = "messages"         // POST /v1/messages (Anthropic)
)

// Kiln attributes on the chat span.
const (
	AttrAPI    = "kiln.request.api"    // one of the API* names
	AttrStream = "kiln.request.stream" // bool
	AttrStatus = "kiln.request.status" // ok, error, timeout, rejected, client_disconnect

	// The request summary (docs/latency-guide.md#the-request-summary-latency). A nullable field is absent
	// when null.
	AttrEmittedTokens         = "kiln.latency.emitted_tokens"
	AttrGapSamples            = "kiln.latency.gap_samples"
	AttrRetainedGapSamples    = "kiln.latency.retained_gap_samples"
	AttrGapSamplesTruncated   = "kiln.latency.gap_samples_truncated"
	AttrTTFTMs                = "kiln.latency.ttft_ms"
	AttrITLP50Ms              = "kiln.latency.itl_ms_p50"
	AttrITLP99Ms              = "kiln.latency.itl_ms_p99"
	AttrITLP999Ms             = "kiln.latency.itl_ms_p999"
	AttrMaxITLMs              = "kiln.latency.max_itl_ms"
	AttrStallThresholdMs      = "kiln.latency.stall_threshold_ms"
	AttrStallCount            = "kiln.latency.stall_count"
	AttrUnexplainedStallCount = "kiln.latency.unexplained_stall_count"
	// AttrStallReasonPrefix + reason name: the count of each reason with a
	// non-zero count.
	AttrStallReasonPrefix = "kiln.latency.stall_reasons."
	// AttrPhasePrefix + phase key ("decode_ms"): each non-null phase total.
	AttrPhasePrefix = "kiln.latency.phases."
	// AttrDurationMs is the whole request, receipt to end.
	AttrDurationMs = "kiln.latency.duration_ms"
	// AttrGapsMs and AttrGapReasons are the retained gaps in compact form,
	// oldest first: a float64 array of gap milliseconds and an int64 array
	// of reason indexes (latency.Reason, the documented order).
	AttrGapsMs     = "kiln.latency.gaps_ms"
	AttrGapReasons = "kiln.latency.gap_reasons"

	// What the prompt took from the prefix cache: metadata.performance's
	// prefix_cache object (docs/latency-guide.md#prefix-cache). The source
	// (shared_prefix, same_slot, checkpoint) is absent when nothing was
	// reused; the stop reason is off, prompt_end, uncached, diverged,
	// evicted, other_adapter or no_checkpoint, and reuse stopped at token
	// AttrPrefixCachedTokens.
	AttrPrefixCachedTokens    = "kiln.prefix_cache.cached_tokens"
	AttrPrefixPrefilledTokens = "kiln.prefix_cache.prefilled_tokens"
	AttrPrefixSource          = "kiln.prefix_cache.source"
	AttrPrefixStopReason      = "kiln.prefix_cache.stop_reason"

	// Stall span attributes.
	AttrStallReason      = "kiln.stall.reason"       // reason name
	AttrStallGapMs       = "kiln.stall.gap_ms"       // the gap
	AttrStallCandidateMs = "kiln.stall.candidate_ms" // the chosen candidate's duration
	AttrStallChosen      = "kiln.stall.chosen"       // the chosen candidate before the unexplained fallback
	AttrStallUnexplained = "kiln.stall.unexplained_ms"
	AttrStallTokenIndex  = "kiln.stall.token_index"
	// AttrStallPhasePrefix + candidate name + "_ms": every non-zero
	// candidate duration of the gap (actor phases and observed slots).
	AttrStallPhasePrefix = "kiln.stall.phase."
	// AttrBlockerLockWaitMs is the total of the ownership waits inside the
	// gap (absent when none); each is also an EventBlockerLockWait.
	AttrBlockerLockWaitMs = "kiln.blocker.lock_wait_ms"
	// AttrBlockerUnresolved counts prefill blockers whose request no
	// longer (or not yet) resolves to a span, so no link could be made;
	// absent when 0.
	AttrBlockerUnresolved = "kiln.blocker.unresolved"
)

// Stall span link attributes: a link from a `kiln.stall` span to the chat
// span of a request whose work blocked the gap ("blocked by what").
const (
	AttrLinkKind = "kiln.link.kind" // LinkKindActorPrefill
	// LinkKindActorPrefill: the linked request's prompt was in a prefill
	// pass inside the gap.
	LinkKindActorPrefill = "actor_prefill"
	// LinkKindTrim: the linked span is a kiln.trim whose exclusive hold
	// overlapped a device-ownership wait inside the gap (docs/maintenance.md
	// section 9). Later maintenance kinds (resize, adapter swap, training
	// step) link the same way.
	LinkKindTrim = "trim"
	// LinkKindResize: the linked span is a kiln.resize. From a chat span:
	// the request's wait for admission overlapped the resize's barrier and
	// it was charged resize (docs/maintenance.md section 9).
	LinkKindResize = "resize"
	// LinkKindAdapterSwap: the linked span is a kiln.adapter_swap (as
	// LinkKindResize, charged adapter).
	LinkKindAdapterSwap = "adapter_swap"
	// LinkKindTrainingStep: the linked span is a kiln.training_step.
	LinkKindTrainingStep = "training_step"
	// AttrBlockerStartOffsetMs is the blocking work's start, in ms since
	// this (the stalled) request's receipt.
	AttrBlockerStartOffsetMs = "kiln.blocker.start_offset_ms"
	// AttrBlockerDurationMs is the blocking work's duration.
	AttrBlockerDurationMs = "kiln.blocker.duration_ms"
	// AttrBlockerSelf is true when the blocking prefill is the stalled
	// request's own (a first token delayed by its own prompt).
	AttrBlockerSelf = "kiln.blocker.self"
)

// Metric family names as exposed on /metrics (docs/latency-guide.md#prometheus).
const (
	MetricITL           = "kiln_token_itl_seconds"
	MetricStalls        = "kiln_token_stalls_total"
	MetricTTFT          = "kiln_request_ttft_seconds"
	MetricPhase         = "kiln_request_latency_phase_seconds"
	MetricDuration      = "kiln_request_duration_seconds"
	MetricRequests      = "kiln_requests_total"
	MetricTokens        = "kiln_tokens_generated_total"
	MetricActive        = "kiln_active_requests"
	MetricGenAITTFT     = "gen_ai.server.time_to_first_token"
	MetricGenAITPOT     = "gen_ai.server.time_per_output_token"
	MetricGenAIDuration = "gen_ai.server.request.duration"
)

// Metric label keys (closed sets only).
const (
	LabelReason = "reason"
	LabelPhase  = "phase"
	LabelStatus = "status"
	// LabelOutcome is kiln_memory_reclaim_attempts_total's: "reclaimed" or
	// "zero_yield" (docs/maintenance.md section 7).
	LabelOutcome = "outcome"
)

// Outcomes of a trim (LabelOutcome's closed set).
const (
	ReclaimOutcomeReclaimed = "reclaimed"
	ReclaimOutcomeZeroYield = "zero_yield"
)

// Buckets returns the latency histogram bounds of docs/latency-guide.md#prometheus, in
// seconds (+Inf is implicit), as a fresh slice.
func Buckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
}

// Maintenance span names (docs/maintenance.md section 9): each operation is a
// span in its own trace.
const (
	SpanTrim = "kiln.trim"
)

// Attributes of the kiln.trim span.
const (
	AttrTrimOutcome        = "kiln.trim.outcome" // "reclaimed" or "zero_yield"
	AttrTrimReclaimedBytes = "kiln.trim.reclaimed_bytes"
	AttrTrimBackendBytes   = "kiln.trim.backend_bytes"
	AttrTrimRSSBefore      = "kiln.trim.rss_before_bytes"
	AttrTrimRSSAfter       = "kiln.trim.rss_after_bytes"
	AttrTrimDeferredMs     = "kiln.trim.deferred_ms"
	AttrMaintenanceReason  = "kiln.maintenance.reason" // "maintenance" (operator) or "automatic_memory_policy"
)

// SpanResize is the span of one KV resize (docs/maintenance.md sections 6 and
// 9), the root of its own trace.
const SpanResize = "kiln.resize"

// Attributes of the kiln.resize span (beside AttrMaintenanceReason).
const (
	AttrResizeFromTokens      = "kiln.resize.from_tokens"
	AttrResizeRequestedTokens = "kiln.resize.requested_tokens"
	AttrResizeActualTokens    = "kiln.resize.actual_tokens"
	AttrResizeDirection       = "kiln.resize.direction" // grow, shrink or none
	AttrResizeBytesBefore     = "kiln.resize.bytes_before"
	AttrResizeBytesAfter      = "kiln.resize.bytes_after"
	AttrResizeRSSBefore       = "kiln.resize.rss_before_bytes"
	AttrResizeRSSAfter        = "kiln.resize.rss_after_bytes"
	AttrResizeDrainMs         = "kiln.resize.drain_ms"
)
