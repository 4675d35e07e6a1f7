package latency

// Summary is the `latency` object of docs/latency-guide.md#the-request-summary-latency. Nullable fields
// are NullFloat; MarshalJSON writes exactly the documented keys, in their documented order,
// with nulls as null.
type Summary struct {
	EmittedTokens       int
	GapSamples          int
	RetainedGapSamples  int
	GapSamplesTruncated bool

	TTFTMs           NullFloat
	ITLP50Ms         NullFloat
	ITLP99Ms         NullFloat
	ITLP999Ms        NullFloat
	MaxITLMs         NullFloat
	StallThresholdMs NullFloat

	StallCount            int
	UnexplainedStallCount int
	StallReasons          ReasonCounts
	Phases                PhaseTotals
}

// MarshalJSON implements json.Marshaler.
func (s Summary) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// AppendJSON appends the JSON object to b.
func (s *Summary) AppendJSON(b []byte) []byte {
	b = append(b, `{"emitted_tokens":`...)
	b = appendInt(b, s.EmittedTokens)
	b = append(b, `,"gap_samples":`...)
	b = appendInt(b, s.GapSamples)
	b = append(b, `,"retained_gap_samples":`...)
	b = appendInt(b, s.RetainedGapSamples)
	b = append(b, `,"gap_samples_truncated":`...)
	b = appendBool(b, s.GapSamplesTruncated)
	b = append(b, `,"ttft_ms":`...)
	b = s.TTFTMs.appendJSON(b)
	b = append(b, `,"itl_ms_p50":`...)
	b = s.ITLP50Ms.appendJSON(b)
	b = append(b, `,"itl_ms_p99":`...)
	b = s.ITLP99Ms.appendJSON(b)
	b = append(b, `,"itl_ms_p999":`...)
	b = s.ITLP999Ms.appendJSON(b)
	b = append(b, `,"max_itl_ms":`...)
	b = s.MaxITLMs.appendJSON(b)
	b = append(b, `,"stall_threshold_ms":`...)
	b = s.StallThresholdMs.appendJSON(b)
	b = append(b, `,"stall_count":`...)
	b = appendInt(b, s.StallCount)
	b = append(b, `,"unexplained_stall_count":`...)
	b = appendInt(b, s.UnexplainedStallCount)
	b = append(b, `,"stall_reasons":`...)
	b = s.StallReasons.AppendJSON(b)
	b = append(b, `,"phases":`...)
	b = s.Phases.AppendJSON(b)
	return append(b, '}')
}
