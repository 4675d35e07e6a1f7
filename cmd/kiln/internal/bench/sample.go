package bench

import "encoding/json"

// Sample is everything the client saw of one request. Times are float
// milliseconds from the client's monotonic clock, counted from the instant
// the request was sent.
type Sample struct {
	Seq          int       `json:"seq"`            // order in which requests were started; conversation x turns + turn - 1 in a conversation
	Prompt       int       `json:"prompt"`         // index of the prompt used
	Conversation int       `json:"conversation"`   // with Workload.Turns > 1: the conversation, from 0 (0 otherwise)
	Turn         int       `json:"turn,omitempty"` // with Workload.Turns > 1: the turn, from 1
	StartMs      float64   `json:"start_ms"`       // since the arm's run began
	Status       int       `json:"status"`         // HTTP status (0 when no response)
	Error        string    `json:"error,omitempty"`
	Retries      int       `json:"retries,omitempty"` // sent again after a kept-alive connection closed under it (Client.post)
	TTFTMs       *float64  `json:"ttft_ms"`           // first content chunk; null when none arrived
	E2EMs        float64   `json:"e2e_ms"`
	OutputTokens int       `json:"output_tokens"`
	UsageTokens  bool      `json:"output_tokens_from_usage"` // true: from the server's usage, else counted chunks
	ChunkMs      []float64 `json:"chunk_ms"`                 // receipt of each content chunk
	GapsMs       []float64 `json:"gaps_ms"`                  // between consecutive content chunks
	FinishReason string    `json:"finish_reason,omitempty"`

	// PromptTokens is the server's usage.prompt_tokens; null when it sent
	// none.
	PromptTokens *int `json:"prompt_tokens"`
	// CachedTokens is how many prompt tokens the server reused instead of
	// prefilling, as it reported them (CachedFrom); null when it did not.
	CachedTokens *int   `json:"cached_tokens"`
	CachedFrom   string `json:"cached_tokens_from,omitempty"`
	// Timings is llama-server's own timings object of the final chunk.
	Timings *PeerTimings `json:"timings,omitempty"`
	// Reply is the reply's text, kept in a conversation: the next turn
	// sends it back.
	Reply string `json:"reply,omitempty"`

	Server *ServerView `json:"server,omitempty"` // Kiln's own view, with --server-timing
}

// Where a sample's CachedTokens came from.
const (
	CachedFromUsage   = "usage.prompt_tokens_details.cached_tokens" // the OpenAI field (Kiln, vLLM, ...)
	CachedFromCacheN  = "timings.cache_n"                           // llama-server's count of reused tokens
	CachedFromPromptN = "usage.prompt_tokens - timings.prompt_n"    // older llama-server: the tokens it did not process
)

// PeerTimings is the part of llama-server's timings object (sent with its
// final chunk) that says how much of the prompt it processed.
type PeerTimings struct {
	PromptN   *int     `json:"prompt_n"`  // prompt tokens processed by this request
	CacheN    *int     `json:"cache_n"`   // prompt tokens reused from the slot's cache (newer versions)
	PromptMs  *float64 `json:"prompt_ms"` // its prompt processing time
	Predicted *int     `json:"predicted_n"`
}

// resolveCached sets CachedTokens from what the server reported: the
// OpenAI usage field when present, else llama-server's timings.
func (s *Sample) resolveCached() {
	if s.CachedFrom == CachedFromUsage || s.Timings == nil {
		return
	}
	switch t := s.Timings; {
	case t.CacheN != nil:
		n := *t.CacheN
		s.CachedTokens, s.CachedFrom = &n, CachedFromCacheN
	case t.PromptN != nil && s.PromptTokens != nil && *t.PromptN >= 0 && *t.PromptN <= *s.PromptTokens:
		n := *s.PromptTokens - *t.PromptN
		s.CachedTokens, s.CachedFrom = &n, CachedFromPromptN
	}
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
