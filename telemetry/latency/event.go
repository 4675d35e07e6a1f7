package latency

import "time"

// TokenEvent is the `kiln.token_timing` object of docs/latency-guide.md#the-per-token-event. Its
// instants are milliseconds since request receipt; MarshalJSON and
// AppendJSON write exactly its fourteen keys, with blocking_phase and
// blocking_phase_ms null when HasBlocking is false (the first token).
//
// Gap is the Go-side classification of the gap that ended at this token
// (valid when HasBlocking); it is not serialized.
type TokenEvent struct {
	Index int
	ID    int

	ReadyMs             float64
	ProducerDeliveredMs float64
	HandlerReceivedMs   float64
	BodyEnqueuedMs      float64
	ResponseDeliveryMs  float64
	HandlerQueueMs      float64
	QueueDelayMs        float64
	ClientDeliveryMs    float64

	HasBlocking     bool
	BlockingPhase   Reason
	BlockingPhaseMs float64

	Gap Attribution
}

// Stall reports whether the token's gap is a stall: one with a blocking
// phase (not the first token's) of at least StallThreshold. It is the one
// rule the stall spans, the stall counter's callers and the diagnosis view
// share.
func (e *TokenEvent) Stall() bool { return e.HasBlocking && IsStall(e.Gap.Gap) }

// IsStall reports whether a gap is a stall under the fixed threshold
// (StallThreshold) that kiln_token_stalls_total counts.
func IsStall(gap time.Duration) bool { return gap >= StallThreshold }

// MarshalJSON implements json.Marshaler.
func (e TokenEvent) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// AppendJSON appends the JSON object to b. It does not allocate when b has
// room (about 400 bytes).
func (e *TokenEvent) AppendJSON(b []byte) []byte {
	b = append(b, `{"object":"kiln.token_timing","source":"batching_engine","token_index":`...)
	b = appendInt(b, e.Index)
	b = append(b, `,"token_id":`...)
	b = appendInt(b, e.ID)
	b = append(b, `,"ready_ms":`...)
	b = appendFloat(b, e.ReadyMs)
	b = append(b, `,"producer_delivered_ms":`...)
	b = appendFloat(b, e.ProducerDeliveredMs)
	b = append(b, `,"handler_received_ms":`...)
	b = appendFloat(b, e.HandlerReceivedMs)
	b = append(b, `,"body_enqueued_ms":`...)
	b = appendFloat(b, e.BodyEnqueuedMs)
	b = append(b, `,"response_delivery_ms":`...)
	b = appendFloat(b, e.ResponseDeliveryMs)
	b = append(b, `,"handler_queue_ms":`...)
	b = appendFloat(b, e.HandlerQueueMs)
	b = append(b, `,"queue_delay_ms":`...)
	b = appendFloat(b, e.QueueDelayMs)
	b = append(b, `,"client_delivery_ms":`...)
	b = appendFloat(b, e.ClientDeliveryMs)
	if e.HasBlocking {
		b = append(b, `,"blocking_phase":"`...)
		b = append(b, e.BlockingPhase.String()...)
		b = append(b, `","blocking_phase_ms":`...)
		b = appendFloat(b, e.BlockingPhaseMs)
		return append(b, '}')
	}
	return append(b, `,"blocking_phase":null,"blocking_phase_ms":null}`...)
}
