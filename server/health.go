package server

import (
	"net/http"
	"time"

	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry"
)

// healthBody is GET /health and /v1/health (docs/http-api.md#get-health-and-get-v1health).
type healthBody struct {
	Status     string         `json:"status"` // "ok", "draining", "unavailable" or "maintenance" (the profile disables inference)
	Ready      bool           `json:"ready"`
	Model      string         `json:"model"`
	UptimeSecs float64        `json:"uptime_secs"`
	Requests   outcomeCounts  `json:"requests"`
	Engine     engineSnapshot `json:"engine"`
	Runtime    runtimeBlock   `json:"runtime"`
	// ServingProfile is docs/maintenance.md section 1's serving_profile.
	ServingProfile servingProfileJSON `json:"serving_profile"`
	Adapter        runningAdapterJSON `json:"adapter"`
}

// runningAdapterJSON is the adapter the engine runs with, in /health and
// /v1/config: its name, which no metric may carry as a label
// (docs/latency-guide.md#prometheus), beside its revision and the number
// kiln_adapter_revision reports for it, so a scraped value can be matched
// to an adapter.
type runningAdapterJSON struct {
	Name           string `json:"name"`            // "base": no adapter
	Revision       string `json:"revision"`        // the sha256 of its weights (x-kiln-loaded-adapter-revision), or "base"
	RevisionNumber int64  `json:"revision_number"` // telemetry.AdapterRevisionNumber(Revision); 0 for base
}

// runningAdapter describes the adapter the engine runs with now.
func (s *Server) runningAdapter() runningAdapterJSON {
	a := s.running()
	rev := lora.Revision(a)
	return runningAdapterJSON{Name: lora.Name(a), Revision: rev, RevisionNumber: telemetry.AdapterRevisionNumber(rev)}
}

type outcomeCounts struct {
	OK               uint64 `json:"ok"`
	Error            uint64 `json:"error"`
	Timeout          uint64 `json:"timeout"`
	Rejected         uint64 `json:"rejected"`
	ClientDisconnect uint64 `json:"client_disconnect"`
}

// engineSnapshot is timing.EngineSnapshot with stable JSON names and
// milliseconds for durations.
type engineSnapshot struct {
	Ready            bool    `json:"ready"`
	QueueDepth       int     `json:"queue_depth"`
	Active           int     `json:"active"`
	Prefilling       int     `json:"prefilling"`
	Draining         int     `json:"draining"`
	KVReserved       int     `json:"kv_reserved"`
	KVBudget         int     `json:"kv_budget"`
	RecurrentBytes   *int64  `json:"recurrent_bytes"`
	BatchLast        int     `json:"batch_last"`
	BatchMax         int     `json:"batch_max"`
	PrefillLast      int     `json:"prefill_last"`
	Forwards         uint64  `json:"forwards"`
	ForwardLastMs    float64 `json:"forward_last_ms"`
	ForwardMaxMs     float64 `json:"forward_max_ms"`
	ForwardTotalMs   float64 `json:"forward_total_ms"`
	Admissions       uint64  `json:"admissions"`
	AdmissionLastMs  float64 `json:"admission_last_ms"`
	AdmissionMaxMs   float64 `json:"admission_max_ms"`
	AdmissionTotalMs float64 `json:"admission_total_ms"`
	CycleIdleTotalMs float64 `json:"cycle_idle_total_ms"`
	LockWaitTotalMs  float64 `json:"lock_wait_total_ms"`
	Blocked          int     `json:"delivery_blocked"`
	BlockedEvents    uint64  `json:"delivery_blocked_events"`
	BlockedTotalMs   float64 `json:"delivery_blocked_total_ms"`
	Admitted         uint64  `json:"admitted"`
	Completed        uint64  `json:"completed"`
	Evictions        uint64  `json:"evictions"`
	Cancellations    uint64  `json:"cancellations"`
	Errors           uint64  `json:"errors"`
	TokensGenerated  uint64  `json:"tokens_generated"`
	Cycles           uint64  `json:"cycles"`
}

// recurrentBytes is the recurrent state held, nil for a model without
// recurrent layers (the fact does not apply).
func recurrentBytes(s timing.EngineSnapshot) *int64 {
	if !s.Recurrent {
		return nil
	}
	return &s.RecurrentBytes
}

func snapshotJSON(s timing.EngineSnapshot) engineSnapshot {
	return engineSnapshot{
		Ready: s.Ready, QueueDepth: s.QueueDepth, Active: s.Active, Prefilling: s.Prefilling, Draining: s.Draining,
		KVReserved: s.KVReserved, KVBudget: s.KVBudget, RecurrentBytes: recurrentBytes(s),
		BatchLast: s.BatchLast, BatchMax: s.BatchMax, PrefillLast: s.PrefillLast,
		Forwards: s.Forwards, ForwardLastMs: timing.Ms(s.ForwardLast), ForwardMaxMs: timing.Ms(s.ForwardMax), ForwardTotalMs: timing.Ms(s.ForwardTotal),
		Admissions: s.Admissions, AdmissionLastMs: timing.Ms(s.AdmissionLast), AdmissionMaxMs: timing.Ms(s.AdmissionMax),
		AdmissionTotalMs: timing.Ms(s.AdmissionTotal),
		CycleIdleTotalMs: timing.Ms(s.CycleIdleTotal), LockWaitTotalMs: timing.Ms(s.LockWaitTotal),
		Blocked: s.Blocked, BlockedEvents: s.BlockedEvents, BlockedTotalMs: timing.Ms(s.BlockedTotal),
		Admitted: s.Admitted, Completed: s.Completed, Evictions: s.Evictions, Cancellations: s.Cancellations,
		Errors: s.Errors, TokensGenerated: s.TokensGenerated, Cycles: s.Cycles,
	}
}

func (s *Server) outcomeCounts() outcomeCounts {
	return outcomeCounts{
		OK:               s.outcomes[telemetry.OutcomeOK].Load(),
		Error:            s.outcomes[telemetry.OutcomeError].Load(),
		Timeout:          s.outcomes[telemetry.OutcomeTimeout].Load(),
		Rejected:         s.outcomes[telemetry.OutcomeRejected].Load(),
		ClientDisconnect: s.outcomes[telemetry.OutcomeClientDisconnect].Load(),
	}
}

// health serves GET /health and /v1/health: 200 when the engine can make
// progress and the server admits requests, 503 otherwise ("draining"
// while the server shuts down, "unavailable", or "maintenance" under the
// maintenance serving profile), with the same body either way.
func (s *Server) health(w http.ResponseWriter, _ *http.Request) error {
	ready := s.gen.Ready() && !s.stopping.Load()
	body := healthBody{
		Status:     "ok",
		Ready:      ready,
		Model:      s.modelID,
		UptimeSecs: time.Since(s.created).Seconds(),
		Requests:   s.outcomeCounts(),
		Engine:     snapshotJSON(s.gen.Snapshot()),
		Runtime:    readRuntime(),

		ServingProfile: s.cfg.servingProfile(),
		Adapter:        s.runningAdapter(),
	}
	status := http.StatusOK
	switch {
	case s.stopping.Load():
		body.Status = "draining"
		status = http.StatusServiceUnavailable
	case !ready:
		body.Status = "unavailable"
		status = http.StatusServiceUnavailable
	case s.cfg.ServingProfile == ProfileMaintenance:
		body.Status = "maintenance" // inference is off by profile
		status = http.StatusServiceUnavailable
	}
	return marshalJSON(w, status, body)
}

// debugState serves GET /v1/debug/model-state: 403 unless enabled; then
// the model, the configuration and the engine's runtime state. Never
// prompt text.
func (s *Server) debugState(w http.ResponseWriter, _ *http.Request) error {
	if !s.cfg.DebugState {
		return &wire.Error{Status: http.StatusForbidden, Type: wire.TypePermission, Code: "debug_state_disabled",
			Message: "the debug model state is disabled; start kiln with --debug-state or KILN_DEBUG_STATE=1 to enable it"}
	}
	mc := s.model.Model.Config
	body := map[string]any{
		"object": "kiln.debug.model_state",
		"model": map[string]any{
			"id": s.modelID,
			"config": map[string]any{
				"dim": mc.Dim, "hidden_dim": mc.HiddenDim, "layers": mc.Layers, "heads": mc.Heads,
				"kv_heads": mc.KVHeads, "vocab": mc.Vocab, "seq_len": mc.SeqLen,
				"norm_eps": mc.NormEps, "rope_theta": mc.RopeTheta,
			},
			"tokenizer": map[string]any{
				"vocab_size": s.tok.VocabSize(), "bos": s.tok.BOS(), "eos": s.tok.EOS(),
				"add_bos": s.tok.AddBOS(), "stop_ids": s.stopIDs,
			},
		},
		"config": s.configJSON(),
		"engine": snapshotJSON(s.gen.Snapshot()),
		"server": map[string]any{
			"stopping":        s.stopping.Load(),
			"streams_in_use":  len(s.streams),
			"requests":        s.outcomeCounts(),
			"recent_requests": len(s.recent.newestFirst()),
		},
	}
	return marshalJSON(w, http.StatusOK, body)
}

// configJSON is the resolved configuration; the access token itself never
// appears, only whether one is set.
func (s *Server) configJSON() map[string]any {
	c := s.cfg
	// A KV resize changes the budget and the batch limit: the live values.
	live := s.gen.Snapshot()
	kvBudget, maxBatch := c.Engine.KVBudget, c.Engine.MaxBatch
	if live.KVBudget > 0 {
		kvBudget, maxBatch = live.KVBudget, live.BatchLimit
	}
	token := "unset"
	if c.AccessToken != "" {
		token = "set"
	}
	return map[string]any{
		"addr":                 c.Addr,
		"model":                c.Model,
		"served_model_id":      s.modelID,
		"performance_metadata": c.PerformanceMetadata,
		"recent_requests":      c.RecentRequests,
		"recent_request_text":  c.RecentRequestText,
		"responses_store":      c.ResponseStore,
		"debug_state":          c.DebugState,
		"access_token":         token,
		"max_body_bytes":       c.MaxBodyBytes,
		"max_streams":          c.MaxStreams,
		"shutdown_grace_secs":  c.ShutdownGrace.Seconds(),
		"retry_after_secs":     c.RetryAfter.Seconds(),
		"threads":              c.Threads,
		"cors_origins":         append([]string{}, c.CORSOrigins...),
		"serving_profile":      c.servingProfile(),
		"memory_reclaim":       c.MemoryReclaim,
		"adapter_dir":          c.AdapterDir,
		"adapter_cache_bytes":  c.AdapterCacheBytes,
		"maintenance_slice_ms": timing.Ms(c.MaintenanceSlice),
		"adapter":              s.runningAdapter(), // live, as kv_budget below
		"train_data_dir":       c.TrainDataDir,
		"kernels":              c.kernelsJSON(),
		"loaded_model":         FactsOf(s.model), // resident_bytes live
		"trace_export":         c.traceExportJSON(),
		"engine": map[string]any{
			"queue_depth":     c.Engine.QueueDepth,
			"max_batch":       maxBatch,
			"kv_budget":       kvBudget,
			"kv_max_tokens":   c.Engine.KVMaxTokens,
			"prefill_chunk":   c.Engine.PrefillChunk,
			"delivery_buffer": c.Engine.DeliveryBuffer,
			"evict_grace_ms":  timing.Ms(c.Engine.EvictGrace),
			"cycle_idle_ms":   timing.Ms(c.Engine.CycleIdle),
		},
		"prefix_cache": c.prefixCacheJSON(),
	}
}

// config serves GET /v1/config.
func (s *Server) config(w http.ResponseWriter, _ *http.Request) error {
	return marshalJSON(w, http.StatusOK, s.configJSON())
}
