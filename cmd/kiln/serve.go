package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	"golang.org/x/term"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/kernels"
	"github.com/kiln-ai/kiln/server"
	"github.com/kiln-ai/kiln/telemetry"
)

// serveFlags binds every `kiln serve` flag to cfg. Each flag is also read
// from KILN_<NAME> (upper case, dashes as underscores); a flag on the
// command line wins over the variable.
func serveFlags(fs *flag.FlagSet, cfg *server.Config) {
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "host:port to listen on (loopback by default)")
	fs.StringVar(&cfg.Model, "model", cfg.Model, `model: "kiln-tiny" (embedded), a .gguf file, a Hugging Face model directory or a llama2.c checkpoint`)
	fs.BoolVar(&cfg.PerformanceMetadata, "performance-metadata", cfg.PerformanceMetadata,
		"add terminal performance metadata when a request leaves include_performance unset (never per-token events)")
	fs.IntVar(&cfg.RecentRequests, "recent-requests", cfg.RecentRequests, "capacity of the recent-requests ring (0 disables it)")
	fs.BoolVar(&cfg.RecentRequestText, "recent-request-text", cfg.RecentRequestText, "record prompt and completion text in recent requests")
	fs.IntVar(&cfg.ResponseStore, "responses-store", cfg.ResponseStore,
		"how many Responses API responses are kept in memory, for an hour, for previous_response_id (0 keeps none)")
	fs.BoolVar(&cfg.DebugState, "debug-state", cfg.DebugState, "enable GET /v1/debug/model-state")
	fs.StringVar(&cfg.AccessToken, "access-token", cfg.AccessToken,
		"require Authorization: Bearer <token> on every endpoint except /health and the dashboard's static files (GET or HEAD of /ui, /ui/... and /, which redirects to /ui; the page sends the token on its API calls); prefer KILN_ACCESS_TOKEN or --access-token-file: a command line is visible to every local user")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", cfg.MaxBodyBytes, "largest accepted request body (413 beyond)")
	fs.DurationVar(&cfg.BodyTimeout, "body-timeout", cfg.BodyTimeout, "how long a request body may take to arrive (408 beyond)")
	fs.Int64Var(&cfg.MaxInflightBytes, "max-inflight-bytes", cfg.MaxInflightBytes,
		"request-body bytes held by all requests at once (429 beyond; at least --max-body-bytes)")
	fs.Var((*hostList)(&cfg.AllowedHosts), "allowed-hosts",
		"comma-separated Host names served besides the loopback names (when bound beyond loopback and set, only these and loopback; * allows any)")
	fs.IntVar(&cfg.MaxStreams, "max-streams", cfg.MaxStreams, "chat requests in flight at once (429 beyond; 0: no server limit)")
	fs.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", cfg.ShutdownGrace, "how long in-flight requests may finish on shutdown")
	fs.DurationVar(&cfg.RetryAfter, "retry-after", cfg.RetryAfter, "Retry-After hint on 429 and 503")
	fs.IntVar(&cfg.Threads, "threads", cfg.Threads, "compute threads (0: one per CPU)")
	fs.IntVar(&cfg.Engine.QueueDepth, "queue-depth", cfg.Engine.QueueDepth, "requests waiting for admission (429 beyond)")
	fs.IntVar(&cfg.Engine.MaxBatch, "max-batch", cfg.Engine.MaxBatch, "requests active at once (0: the backend's slots)")
	fs.IntVar(&cfg.Engine.PrefillChunk, "prefill-chunk", cfg.Engine.PrefillChunk, "prompt tokens prefilled per cycle")
	fs.IntVar(&cfg.Engine.DeliveryBuffer, "delivery-buffer", cfg.Engine.DeliveryBuffer, "tokens buffered per request channel")
	fs.DurationVar(&cfg.Engine.EvictGrace, "evict-grace", cfg.Engine.EvictGrace, "how long a request may block on a client that is not reading")
	fs.DurationVar(&cfg.Engine.CycleIdle, "cycle-idle", cfg.Engine.CycleIdle, "cooperative pause after each cycle")
	fs.IntVar(&cfg.Engine.KVBudget, "kv-budget", cfg.Engine.KVBudget, "KV positions reserved by active requests (0: slots x context)")
	fs.IntVar(&cfg.Engine.KVMaxTokens, "kv-max-tokens", cfg.Engine.KVMaxTokens, "largest KV budget a resize may set (0: half of physical memory)")
	fs.Var(prefixCacheFlag{&cfg.Engine.PrefixCacheOff}, "prefix-cache",
		"automatic prefix caching, on or off: a prompt reuses the KV of the longest prefix cached from earlier requests instead of prefilling it")
	fs.Var((*byteSize)(&cfg.Engine.PrefixCacheBytes), "prefix-cache-bytes",
		"KV bytes the prefix cache keeps for prompts no active request uses, a `size` such as 512MiB (0: only the free KV budget bounds it)")
	fs.Var(server.ProfileFlag(cfg), "serving-profile", "stable, experimental or maintenance (inference off; maintenance routes only)")
	fs.Var(&cfg.MemoryReclaim, "memory-reclaim", "trims: off, on-demand (POST /v1/maintenance/trim) or automatic (also when idle)")
}

// Serve-only settings that are not server.Config.
type serveExtra struct {
	slots           int
	context         int
	logLevel        string
	accessTokenFile string
	tokenOnCLI      bool // --access-token was given on the command line: warn
}

// hostList is a comma-separated flag value.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(v string) error {
	*h = nil
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			*h = append(*h, name)
		}
	}
	return nil
}

// envName is the KILN_* variable of a flag.
func envName(flagName string) string {
	return "KILN_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseServeConfig parses flags over KILN_* variables over the defaults,
// once, and validates the result.
func parseServeConfig(args []string, getenv func(string) string, help io.Writer) (server.Config, serveExtra, error) {
	cfg := server.DefaultConfig()
	extra := serveExtra{slots: 16, logLevel: "info"}
	fs := flag.NewFlagSet("kiln serve", flag.ContinueOnError)
	fs.SetOutput(help) // help asked for goes there; a mistake is one line (parseFlags)
	serveFlags(fs, &cfg)
	serveAPIFlags(fs, &cfg)
	fs.IntVar(&extra.slots, "slots", extra.slots, "sequences the KV cache holds at once")
	fs.IntVar(&extra.context, "context", 0, "context length of a GGUF or Hugging Face model, capped at the model's own (0: 4096)")
	fs.StringVar(&extra.logLevel, "log-level", extra.logLevel, "debug, info, warn or error")
	fs.StringVar(&extra.accessTokenFile, "access-token-file", "", "read the access token from this file (surrounding whitespace trimmed)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: kiln serve [flags]\n\nEvery flag is also read from KILN_<FLAG> (e.g. KILN_ADDR); the flag wins.\nOTEL_* variables configure tracing export.\n\nFlags:")
		fs.PrintDefaults()
	}
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if envErr != nil {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", envName(f.Name), v, err)
			}
		}
	})
	if envErr != nil {
		return cfg, extra, envErr
	}
	// A token on the command line is visible to every local user (ps):
	// tell it from one given by KILN_ACCESS_TOKEN, to warn.
	envToken := cfg.AccessToken
	cfg.AccessToken = ""
	if cfg.ProfileSource == server.SourceFlag {
		cfg.ProfileSource = server.SourceEnv // set by KILN_SERVING_PROFILE; a flag below sets it again
	}
	if err := parseFlags(fs, args); err != nil {
		return cfg, extra, err
	}
	if cfg.AccessToken != "" {
		extra.tokenOnCLI = true
	} else {
		cfg.AccessToken = envToken
	}
	if err := readTokenFile(&cfg, extra.accessTokenFile); err != nil {
		return cfg, extra, err
	}
	if fs.NArg() > 0 {
		return cfg, extra, fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	if err := checkServeRanges(cfg, extra); err != nil {
		return cfg, extra, err
	}
	if extra.context < 0 {
		return cfg, extra, fmt.Errorf("context: must be 0 (the default) or a positive length (got %d)", extra.context)
	}
	switch extra.logLevel {
	case "debug", "info", "warn", "error":
	default:
		// zerolog's own message ("defaulting to NoLevel") describes a
		// fallback that does not happen here.
		return cfg, extra, fmt.Errorf("invalid value %q for --log-level: use debug, info, warn or error", extra.logLevel)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, extra, err
	}
	return cfg, extra, nil
}

// readTokenFile sets the access token from path, when given.
func readTokenFile(cfg *server.Config, path string) error {
	if path == "" {
		return nil
	}
	if cfg.AccessToken != "" {
		return errors.New("access_token_file: give the token once: --access-token-file, or --access-token / KILN_ACCESS_TOKEN, not both")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("access_token_file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return fmt.Errorf("access_token_file: %s holds no token", path)
	}
	cfg.AccessToken = tok
	return nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	cfg, extra, err := parseServeConfig(args, os.Getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return usageError{err}
	}
	tcfg, tel, log, err := startTelemetry(extra, stderr)
	if err != nil {
		return err
	}
	defer func() {
		// Flush telemetry last, with a deadline of its own.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = errors.Join(err, tel.Shutdown(sctx))
	}()

	model, err := openServeModel(cfg.Model, extra.context, &log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, model.Close()) }()
	cfg.TraceExport = traceExport(tcfg) // as GET /v1/config reports it
	logSkipped(model, &log)

	pool := newServePool(&cfg)
	defer pool.Close()
	state := model.Model.NewState(extra.slots, pool)

	eng, err := engine.New(state, cfg.Engine, append(faultOptions(os.Getenv), engine.WithAdapters(), engine.WithObserver(tel))...)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if err := eng.Start(ctx); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = errors.Join(err, eng.Shutdown(sctx))
	}()

	adapters := lora.NewRegistry(cfg.AdapterDir, model.Model, cfg.AdapterCacheBytes)
	trainer := newTrainer(&cfg, eng, model, pool, adapters)
	srv, err := server.New(cfg, server.Deps{Model: model, Engine: eng, Telemetry: tel, Logger: &log, Training: trainer, Adapters: adapters})
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		return err
	}
	reclaimDone := srv.StartAutoReclaim(ctx) // --memory-reclaim automatic
	defer func() { <-reclaimDone }()         // before the engine shuts down
	cfg.Addr = srv.Addr().String()           // the bound address (a port 0 resolved)
	announce(stderr, &log, server.FactsOf(model), cfg, extra.slots)

	return drain(ctx, eng, srv, cfg.ShutdownGrace, &log)
}

// newServePool builds the compute pool of --threads (0: one per CPU) and
// resolves cfg's threads and kernel paths, as GET /v1/config and the debug
// state report them.
// startTelemetry sets up telemetry from the OTEL_* environment and the
// logger at --log-level, warning when the access token came on the command
// line.
func startTelemetry(extra serveExtra, stderr io.Writer) (telemetry.Config, *telemetry.Telemetry, zerolog.Logger, error) {
	tcfg, err := telemetry.ConfigFromEnv(os.Getenv)
	if err != nil {
		return tcfg, nil, zerolog.Logger{}, err
	}
	if tcfg.ServiceVersion == "" {
		tcfg.ServiceVersion = version
	}
	level, _ := zerolog.ParseLevel(extra.logLevel)
	tel, log, err := newTelemetry(tcfg, stderr, level)
	if err != nil {
		return tcfg, nil, log, err
	}
	if extra.tokenOnCLI {
		log.Warn().Msg("--access-token on the command line is visible to every local user (ps, /proc); use KILN_ACCESS_TOKEN or --access-token-file")
	}
	otel.SetErrorHandler(telemetry.ErrorHandler(log))
	return tcfg, tel, log, nil
}

// logSkipped logs what of the model's files the loader left out (a vision
// tower, multi-token-prediction layers).
func logSkipped(model *llama.Loaded, log *zerolog.Logger) {
	for _, what := range model.Model.Skipped {
		log.Info().Str("skipped", what).Msg("not loaded: " + what)
	}
}

// newTrainer is the training job runner. Training runs on the serving
// pool, only while it holds the engine exclusively (one slice at a time),
// so the two never share it at once.
func newTrainer(cfg *server.Config, eng *engine.Engine, model *llama.Loaded, pool *kernels.Pool, adapters *lora.Registry) *train.Runner {
	modelID := model.ID
	if cfg.ServedModelName != "" {
		modelID = cfg.ServedModelName // the name a written adapter's config gives its base, as clients see it
	}
	return train.NewRunner(train.RunnerConfig{Engine: eng, Model: model.Model, Pool: pool, Adapters: adapters,
		ModelID: modelID, Slice: cfg.MaintenanceSlice})
}

func newServePool(cfg *server.Config) *kernels.Pool {
	if cfg.Threads == 0 {
		cfg.Threads = runtime.NumCPU()
	}
	pool := kernels.NewPool(cfg.Threads)
	cfg.KernelPath = pool.Path()
	cfg.KernelPaths, cfg.CPUFeatures = kernels.Paths(), kernels.CPUFeatures()
	return pool
}

// openServeModel opens --model, logging a --context it does not run with.
func openServeModel(spec string, context int, log *zerolog.Logger) (*llama.Loaded, error) {
	return openModel("serve", spec, context, func(w string, l *llama.Loaded) {
		log.Warn().Int("context_requested", context).Int("model_context", l.Model.OwnContext()).
			Int("context", l.Model.Config.SeqLen).Msg(w)
	})
}

// drain waits for a signal or an engine failure, then shuts the server
// down within grace: the exit status says whether every in-flight request
// finished.
func drain(ctx context.Context, eng *engine.Engine, srv *server.Server, grace time.Duration, log *zerolog.Logger) error {
	failed := awaitStop(ctx, eng, log) // nil on a signal; an exitError when the engine failed
	log.Info().Int64("grace_ms", grace.Milliseconds()).Msg("shutting down: no new requests (503), letting in-flight streams finish; a second signal exits at once")
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// The exit status says the drain did not complete.
		log.Warn().Err(err).Msg("shutdown grace passed: in-flight requests were cut")
		if failed != nil {
			return failed // an engine failure keeps its own exit status
		}
		return fmt.Errorf("shutdown: %w", err)
	}
	if failed != nil {
		return failed
	}
	log.Info().Msg("drained: every in-flight request finished")
	return nil
}

// newTelemetry builds the telemetry and the process's one logger: the
// telemetry's (telemetry.NewLogger over stderr: console text on a
// terminal, JSON otherwise, trace and span ids from an event's context),
// at the configured level.
func newTelemetry(tcfg telemetry.Config, stderr io.Writer, level zerolog.Level) (*telemetry.Telemetry, zerolog.Logger, error) {
	tel, err := telemetry.New(tcfg, telemetry.WithLogOutput(stderr, isTerminal(stderr)))
	if err != nil {
		return nil, zerolog.Logger{}, fmt.Errorf("telemetry: %w", err)
	}
	return tel, tel.Logger().Level(level), nil
}

// isTerminal reports whether w is a terminal (a human reads it).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
