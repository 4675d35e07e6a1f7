package server

import (
	"net/url"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/server/wire"
)

// TraceExport is where finished spans go (OTLP), as cmd resolved it from
// the OTEL_* variables; an empty Endpoint means export is off. Only the
// endpoint and protocol are kept: the headers (which carry credentials)
// never reach the server.
type TraceExport struct {
	Endpoint string
	Protocol string
}

// ModelFacts are what was loaded, for the start-up log and the
// loaded_model object of GET /v1/config. A fact that does not apply (the
// file of the embedded model, a resident size this system does not report)
// is a nil pointer, null in JSON.
type ModelFacts struct {
	ID              string         `json:"id"`
	Format          string         `json:"format"`
	Architecture    string         `json:"architecture"`
	Parameters      int64          `json:"parameters"`
	WeightTypes     map[string]int `json:"weight_types"`
	WeightBytes     int64          `json:"weight_bytes"`
	FileBytes       *int64         `json:"file_bytes"`
	Context         int            `json:"context"`
	ModelContext    int            `json:"model_context"`
	Vocab           int            `json:"vocab_size"`
	KVBytesPerToken int64          `json:"kv_bytes_per_token"`
	KVBytesPerSlot  int64          `json:"kv_bytes_per_slot"`
	RecurrentBytes  *int64         `json:"recurrent_bytes_per_slot"`
	MappedBytes     int64          `json:"mapped_bytes"`
	ResidentBytes   *int64         `json:"resident_bytes"`
}

// FactsOf describes l. ResidentBytes is the process's resident set now.
func FactsOf(l *llama.Loaded) ModelFacts {
	m := l.Model
	f := ModelFacts{
		ID: l.ID, Format: l.Format, Architecture: m.Config.Arch, Parameters: m.Params(),
		WeightTypes: m.WeightTypes(), WeightBytes: m.WeightBytes(),
		Context: m.Config.SeqLen, ModelContext: m.OwnContext(), Vocab: m.Config.Vocab,
		KVBytesPerToken: m.Config.KVBytesPerPos(), KVBytesPerSlot: m.KVBytesPerSlot(),
		MappedBytes: l.MappedBytes,
	}
	if l.FileBytes > 0 {
		f.FileBytes = &l.FileBytes
	}
	if b := m.Config.RecurrentBytesPerSlot(); b > 0 {
		f.RecurrentBytes = &b
	}
	if rss := engine.ResidentBytes(); rss > 0 {
		f.ResidentBytes = &rss
	}
	return f
}

// traceExportJSON is the trace_export object of GET /v1/config: whether
// spans are exported and where, the endpoint without any user
// information it carries (a password in the URL).
func (c Config) traceExportJSON() map[string]any {
	if c.TraceExport.Endpoint == "" {
		return map[string]any{"enabled": false, "endpoint": nil, "protocol": nil}
	}
	return map[string]any{"enabled": true, "endpoint": RedactEndpoint(c.TraceExport.Endpoint), "protocol": c.TraceExport.Protocol}
}

// RedactEndpoint is an exporter endpoint fit to show: without the user
// information and query of the URL, where credentials may sit.
func RedactEndpoint(ep string) string {
	u, err := url.Parse(ep)
	if err != nil {
		return "(unparsable endpoint)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// appendModelMeta appends, to a /v1/models entry, the context length as
// vLLM (max_model_len) and llama.cpp (meta) give it, and llama.cpp's other
// meta facts.
func (s *Server) appendModelMeta(b []byte) []byte {
	m := s.model.Model
	b = append(b, `,"max_model_len":`...)
	b = wire.AppendInt(b, int64(m.Config.SeqLen))
	b = append(b, `,"meta":{"n_ctx_train":`...)
	b = wire.AppendInt(b, int64(m.OwnContext()))
	b = append(b, `,"n_params":`...)
	b = wire.AppendInt(b, m.Params())
	b = append(b, `,"size":`...)
	b = wire.AppendInt(b, m.WeightBytes())
	b = append(b, `,"n_vocab":`...)
	b = wire.AppendInt(b, int64(m.Config.Vocab))
	b = append(b, `,"n_embd":`...)
	b = wire.AppendInt(b, int64(m.Config.Dim))
	return append(b, '}')
}
