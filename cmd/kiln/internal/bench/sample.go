package bench

import "encoding/json"

// Sample is everything the client saw of one request. Times are float
// milliseconds from the client's monotonic clock, counted from the instant
// the request was sent.
type Sample struct {
	Seq          int       `json:"seq"`      // order in which requests were started
	Prompt       int       `json:"prompt"`   // index of the prompt used
	StartMs      float64   `json:"start_ms"` // since the arm's run began
	Status       int       `json:"status"`   // HTTP status (0 when no response)
	Error        string    `json:"error,omitempty"`
	TTFTMs       *float64  `json:"ttft_ms"` // first content chunk; null when none arrived
	E2EMs        float64   `json:"e2e_ms"`
	OutputTokens int       `json:"output_tokens"`
	UsageTokens  bool      `json:"output_tokens_from_usage"` // true: from the server's usage, else counted chunks
	ChunkMs      []float64 `json:"chunk_ms"`                 // receipt of each content chunk
	GapsMs       []float64 `json:"gaps_ms"`                  // between consecutive content chunks
	FinishReason string    `json:"finish_reason,omitempty"`

	Server *ServerView `json:"server,omitempty"` // Kiln's own view, with --server-timing
}

// ServerView is what a Kiln server reported about the request beside the
// client's view: its per-token timing events, when each reached the client,
// and its terminal summary.
type ServerView struct {
	Events    []TimingEvent   `json:"events"`
	ReceiptMs []float64       `json:"receipt_ms"` // client receipt of each event
	Latency   json.RawMessage `json:"latency,omitempty"`
}

// TimingEvent is the subset of kiln.token_timing the comparison uses; the
// raw event is kept whole in Raw.
type TimingEvent struct {
	TokenIndex      int             `json:"token_index"`
	ReadyMs         float64         `json:"ready_ms"`
	BodyEnqueuedMs  float64         `json:"body_enqueued_ms"`
	BlockingPhase   *string         `json:"blocking_phase"`
	BlockingPhaseMs *float64        `json:"blocking_phase_ms"`
	Raw             json.RawMessage `json:"raw"`
}

// ServerGapsMs returns the server's inter-token gaps (ready to ready).
func (v *ServerView) ServerGapsMs() []float64 {
	if v == nil || len(v.Events) < 2 {
		return nil
	}
	gaps := make([]float64, 0, len(v.Events)-1)
	for i := 1; i < len(v.Events); i++ {
		gaps = append(gaps, v.Events[i].ReadyMs-v.Events[i-1].ReadyMs)
	}
	return gaps
}
