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
	"golang.org/x/term"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
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
	fs.BoolVar(&cfg.DebugState, "debug-state", cfg.DebugState, "enable GET /v1/debug/model-state")
	fs.StringVar(&cfg.AccessToken, "access-token", cfg.AccessToken, "require Authorization: Bearer <token> on every endpoint but /health")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", cfg.MaxBodyBytes, "largest accepted request body (413 beyond)")
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
	fs.Var(server.ProfileFlag(cfg), "serving-profile", "stable, experimental or maintenance (inference off; maintenance routes only)")
	fs.Var(&cfg.MemoryReclaim, "memory-reclaim", "trims: off, on-demand (POST /v1/maintenance/trim) or automatic (also when idle)")
}

// Serve-only settings that are not server.Config.
type serveExtra struct {
	slots    int
	context  int
	logLevel string
}

// envName is the KILN_* variable of a flag.
func envName(flagName string) string {
	return "KILN_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseServeConfig parses flags over KILN_* variables over the defaults,
// once, and validates the result.
func parseServeConfig(args []string, getenv func(string) string, stderr io.Writer) (server.Config, serveExtra, error) {
	cfg := server.DefaultConfig()
	extra := serveExtra{slots: 16, logLevel: "info"}
	fs := flag.NewFlagSet("kiln serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	serveFlags(fs, &cfg)
	fs.IntVar(&extra.slots, "slots", extra.slots, "sequences the KV cache holds at once")
	fs.IntVar(&extra.context, "context", 0, "context length of a GGUF or Hugging Face model, capped at the model's own (0: 4096)")
	fs.StringVar(&extra.logLevel, "log-level", extra.logLevel, "debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kiln serve [flags]\n\nEvery flag is also read from KILN_<FLAG> (e.g. KILN_ADDR); the flag wins.\nOTEL_* variables configure tracing export.\n\nFlags:")
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
	if cfg.ProfileSource == server.SourceFlag {
		cfg.ProfileSource = server.SourceEnv // set by KILN_SERVING_PROFILE; a flag below sets it again
	}
	if err := fs.Parse(args); err != nil {
		return cfg, extra, err
	}
	if fs.NArg() > 0 {
		return cfg, extra, fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	if extra.slots < 1 {
		return cfg, extra, fmt.Errorf("slots: must be at least 1 (got %d)", extra.slots)
	}
	if extra.context < 0 {
		return cfg, extra, fmt.Errorf("context: must be 0 (the default) or a positive length (got %d)", extra.context)
	}
	if _, err := zerolog.ParseLevel(extra.logLevel); err != nil {
		return cfg, extra, fmt.Errorf("log_level: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, extra, err
	}
	return cfg, extra, nil
}

func runServe(ctx context.Context, args []string, _, stderr io.Writer) (err error) {
	cfg, extra, err := parseServeConfig(args, os.Getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	tcfg, err := telemetry.ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	if tcfg.ServiceVersion == "" {
		tcfg.ServiceVersion = version
	}
	level, _ := zerolog.ParseLevel(extra.logLevel)
	tel, log, err := newTelemetry(tcfg, stderr, level)
	if err != nil {
		return err
	}
	defer func() {
		// Flush telemetry last, with a deadline of its own.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = errors.Join(err, tel.Shutdown(sctx))
	}()

	model, err := llama.OpenWith(cfg.Model, llama.OpenOptions{Context: extra.context})
	if err != nil {
		return fmt.Errorf("model %q: %w", cfg.Model, err)
	}
	defer func() { err = errors.Join(err, model.Close()) }()

	threads := cfg.Threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	pool := kernels.NewPool(threads)
	defer pool.Close()
	state := model.Model.NewState(extra.slots, pool)

	eng, err := engine.New(state, cfg.Engine)
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

	srv, err := server.New(cfg, server.Deps{Model: model, Engine: eng, Telemetry: tel, Logger: &log})
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		return err
	}
	reclaimDone := srv.StartAutoReclaim(ctx) // --memory-reclaim automatic
	defer func() { <-reclaimDone }()         // before the engine shuts down
	log.Info().Str("model", model.ID).Int("slots", extra.slots).Int("threads", threads).Msg("kiln serving")

	<-ctx.Done()
	log.Info().Dur("grace", cfg.ShutdownGrace).Msg("shutting down: no new requests, letting in-flight streams finish")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn().Err(err).Msg("shutdown deadline passed")
	}
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
