package server

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/lora"
)

// Config is the server's resolved configuration, parsed once in cmd/kiln
// from flags and KILN_* variables. The keys in Validate's errors are the
// snake_case names that map to --flag-names and KILN_FLAG_NAMES.
type Config struct {
	// Addr is the host:port to listen on. Default 127.0.0.1:8420 (loopback).
	Addr string
	// Model is the model spec that was loaded ("kiln-tiny", a .gguf or a
	// llama2.c checkpoint path); informational here, cmd opens it.
	Model string
	// PerformanceMetadata is the server-wide default for terminal
	// performance metadata when a request leaves include_performance absent
	// or null. It never adds per-token timing events.
	PerformanceMetadata bool
	// RecentRequests is the capacity of the recent-requests ring; 0
	// disables it.
	RecentRequests int
	// RecentRequestText records prompt and completion text in the ring.
	RecentRequestText bool
	// ResponseStore is how many Responses API responses are kept, in
	// memory, for previous_response_id and GET /v1/responses/{id}; 0
	// keeps none.
	ResponseStore int
	// DebugState enables GET /v1/debug/model-state.
	DebugState bool
	// AccessToken, when set, is required as "Authorization: Bearer <token>"
	// on every endpoint but /health.
	AccessToken string
	// MaxBodyBytes bounds a request body; larger bodies get 413.
	MaxBodyBytes int64
	// BodyTimeout bounds the reading of a request body, from the end of
	// its headers; a body not read in time gets 408. Bodies are read
	// whole before a request takes a stream slot.
	BodyTimeout time.Duration
	// MaxInflightBytes bounds the request-body bytes held by all requests
	// at once (read, or being read, and not yet encoded); beyond it a
	// request gets 429 with Retry-After.
	MaxInflightBytes int64
	// AllowedHosts are Host header names accepted besides the loopback
	// names (hosts.go): when Addr is loopback only loopback names and
	// these are served; beyond loopback every name is served unless
	// this is set. "*" allows any.
	AllowedHosts []string
	// MaxStreams bounds the chat requests in flight at once (streaming or
	// not); beyond it a request gets 429. 0 means no server-level limit
	// (the engine's queue still bounds admission).
	MaxStreams int
	// ShutdownGrace is how long Shutdown lets in-flight requests finish
	// before it closes their connections.
	ShutdownGrace time.Duration
	// RetryAfter is the Retry-After hint on 429 and 503.
	RetryAfter time.Duration
	// Engine holds the batching engine's tunables (engine.Config).
	Engine engine.Config
	// Threads is the compute worker count (0: one per CPU); cmd sizes the
	// kernels pool with it.
	Threads int
	// ServedModelName, when set, is the model id clients name and see
	// (GET /v1/models, the "model" of requests and responses) instead of
	// the loaded model's (the file stem, the directory name or kiln-tiny).
	ServedModelName string
	// CORSOrigins are the browser origins allowed to call the API
	// (cors.go); empty (the default) sends no CORS headers.
	CORSOrigins []string
	// ServingProfile is stable (default), experimental or maintenance
	// (docs/maintenance.md section 1); ProfileSource says where it came from
	// (SourceDefault, SourceFlag or SourceEnv).
	ServingProfile ServingProfile
	ProfileSource  string
	// MemoryReclaim is off (default), on-demand or automatic: whether
	// trims run (POST /v1/maintenance/trim, and by themselves when idle).
	MemoryReclaim ReclaimMode
	// AdapterDir holds the LoRA adapters requests and the adapter routes
	// name (docs/maintenance.md section 5): PEFT subdirectories and .gguf
	// files. Default ./adapters; a missing directory holds none.
	AdapterDir string
	// AdapterCacheBytes bounds the memory of the adapters kept loaded
	// between the requests that name them (float32 A and B); past it the
	// least recently used are read again when next named. The server
	// default adapter is always kept. Default 2 GiB; 0 keeps only the
	// default and the adapter of the latest load.
	AdapterCacheBytes int64
	// MaintenanceSlice bounds how long a maintenance operation that can be
	// cut (a training step) holds the engine exclusively before the
	// waiting inference runs (--maintenance-slice); 0 holds whole steps.
	MaintenanceSlice time.Duration
	// TrainDataDir is the only directory whose JSONL files a training
	// job's dataset_path may name (docs/maintenance.md section 8); "" (the
	// default) refuses dataset_path.
	TrainDataDir string
	// KernelPath is the kernel path of the compute pool
	// (kernels.Pool.Path), resolved by cmd like Threads.
	KernelPath string
	// KernelPaths are every kernel path this CPU could run and
	// CPUFeatures the features the dispatch looked at, resolved by cmd from
	// the kernels package (reported by /v1/config and the debug state).
	KernelPaths []string
	CPUFeatures string
	// TraceExport is where spans are exported, reported by /v1/config;
	// cmd resolves it from the OTEL_* variables (telemetry exports them).
	TraceExport TraceExport
}

// Defaults.
const (
	DefaultAddr           = "127.0.0.1:8420"
	DefaultRecentRequests = 100
	DefaultResponseStore  = 256
	DefaultMaxBodyBytes   = 4 << 20
	DefaultBodyTimeout    = 30 * time.Second
	DefaultMaxInflight    = 64 << 20
	DefaultMaxStreams     = 1024
	DefaultShutdownGrace  = 30 * time.Second
	DefaultRetryAfter     = time.Second
	// DefaultAdapterCacheBytes holds about a dozen rank-16 adapters of a
	// 7B model on all seven projections (160 MB each in float32).
	DefaultAdapterCacheBytes = 2 << 30
	// DefaultMaintenanceSlice is --maintenance-slice's default: a stream
	// beside a training job pauses at most about this long (plus one
	// forward invocation) at a time.
	DefaultMaintenanceSlice = 100 * time.Millisecond
)

// DefaultConfig returns the defaults of every field.
func DefaultConfig() Config {
	return Config{
		Addr:              DefaultAddr,
		Model:             "kiln-tiny",
		RecentRequests:    DefaultRecentRequests,
		ResponseStore:     DefaultResponseStore,
		MaxBodyBytes:      DefaultMaxBodyBytes,
		BodyTimeout:       DefaultBodyTimeout,
		MaxInflightBytes:  DefaultMaxInflight,
		MaxStreams:        DefaultMaxStreams,
		ShutdownGrace:     DefaultShutdownGrace,
		RetryAfter:        DefaultRetryAfter,
		Engine:            engine.DefaultConfig(),
		ServingProfile:    ProfileStable,
		ProfileSource:     SourceDefault,
		MemoryReclaim:     ReclaimOff,
		AdapterDir:        lora.DefaultDir,
		AdapterCacheBytes: DefaultAdapterCacheBytes,
		MaintenanceSlice:  DefaultMaintenanceSlice,
	}
}

// Validate reports the first invalid field, naming its key.
func (c Config) Validate() error {
	_, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("addr: %q is not host:port: %w", c.Addr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("addr: port %q is not a number in 0..65535", port)
	}
	if c.RecentRequests < 0 || c.RecentRequests > 100000 {
		return fmt.Errorf("recent_requests: must be in 0..100000 (got %d)", c.RecentRequests)
	}
	if c.ResponseStore < 0 || c.ResponseStore > 100000 {
		return fmt.Errorf("responses_store: must be in 0..100000 (got %d)", c.ResponseStore)
	}
	if c.MaxBodyBytes <= 0 {
		return fmt.Errorf("max_body_bytes: must be positive (got %d)", c.MaxBodyBytes)
	}
	if c.BodyTimeout <= 0 {
		return fmt.Errorf("body_timeout: must be positive (got %s)", c.BodyTimeout)
	}
	if c.MaxInflightBytes < c.MaxBodyBytes {
		return fmt.Errorf("max_inflight_bytes: must be at least max_body_bytes (%d, got %d)", c.MaxBodyBytes, c.MaxInflightBytes)
	}
	for _, h := range c.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ \t") {
			return fmt.Errorf("allowed_hosts: %q is not a host name", h)
		}
	}
	if c.MaxStreams < 0 {
		return fmt.Errorf("max_streams: must not be negative (got %d)", c.MaxStreams)
	}
	if c.ShutdownGrace < 0 {
		return fmt.Errorf("shutdown_grace: must not be negative (got %s)", c.ShutdownGrace)
	}
	if c.RetryAfter < 0 {
		return fmt.Errorf("retry_after: must not be negative (got %s)", c.RetryAfter)
	}
	if c.Threads < 0 {
		return fmt.Errorf("threads: must not be negative (got %d)", c.Threads)
	}
	if err := validateOrigins(c.CORSOrigins); err != nil {
		return err
	}
	if c.AdapterDir == "" || strings.ContainsRune(c.AdapterDir, 0) {
		return fmt.Errorf("adapter_dir: %q is not a directory path", c.AdapterDir)
	}
	if c.MaintenanceSlice < 0 {
		return fmt.Errorf("maintenance_slice: must not be negative (got %v; 0 holds whole steps)", c.MaintenanceSlice)
	}
	if c.AdapterCacheBytes < 0 {
		return fmt.Errorf("adapter_cache_bytes: must not be negative (got %d)", c.AdapterCacheBytes)
	}
	if err := c.validateKernelPath(); err != nil {
		return err
	}
	if err := c.validateMaintenance(); err != nil {
		return err
	}
	if err := c.Engine.Validate(); err != nil {
		return err
	}
	return nil
}

// Loopback reports whether Addr binds only the loopback interface.
func (c Config) Loopback() bool {
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
