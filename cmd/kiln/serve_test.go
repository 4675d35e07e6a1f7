package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/kiln-ai/kiln/server"
	"github.com/kiln-ai/kiln/telemetry"
)

// TestParseServeConfig: flags over KILN_* variables over defaults; errors
// name the offending key or variable.
func TestParseServeConfig(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    func(*server.Config)
		wantErr string
	}{
		{name: "defaults", want: func(*server.Config) {}},
		{
			name: "env",
			env: map[string]string{"KILN_ADDR": "0.0.0.0:9000", "KILN_DEBUG_STATE": "1", "KILN_PREFILL_CHUNK": "16",
				"KILN_EVICT_GRACE": "2s", "KILN_ACCESS_TOKEN": "tok", "KILN_PERFORMANCE_METADATA": "true"},
			want: func(c *server.Config) {
				c.Addr, c.DebugState, c.Engine.PrefillChunk, c.Engine.EvictGrace = "0.0.0.0:9000", true, 16, 2*time.Second
				c.AccessToken, c.PerformanceMetadata = "tok", true
			},
		},
		{
			name: "flag wins over env",
			args: []string{"--addr", "127.0.0.1:1", "--recent-requests", "5", "--recent-request-text", "--queue-depth", "3", "--max-batch", "2", "--kv-budget", "4096", "--delivery-buffer", "8", "--cycle-idle", "1ms", "--threads", "2",
				"--served-model-name", "mine", "--cors-origin", "http://a:1, https://b", "--cors-origin", "http://c"},
			env: map[string]string{"KILN_ADDR": "0.0.0.0:9000", "KILN_RECENT_REQUESTS": "50"},
			want: func(c *server.Config) {
				c.Addr, c.RecentRequests, c.RecentRequestText = "127.0.0.1:1", 5, true
				c.ServedModelName, c.CORSOrigins = "mine", []string{"http://a:1", "https://b", "http://c"}
				c.Engine.QueueDepth, c.Engine.MaxBatch, c.Engine.KVBudget, c.Engine.DeliveryBuffer = 3, 2, 4096, 8
				c.Engine.CycleIdle, c.Threads = time.Millisecond, 2
			},
		},
		{
			name: "hardening flags",
			args: []string{"--allowed-hosts", " kiln.lan, Example.COM:8420 ,", "--body-timeout", "3s", "--max-inflight-bytes", "8388608"},
			env:  map[string]string{"KILN_ALLOWED_HOSTS": "ignored.example"},
			want: func(c *server.Config) {
				c.AllowedHosts, c.BodyTimeout, c.MaxInflightBytes = []string{"kiln.lan", "Example.COM:8420"}, 3*time.Second, 8<<20
			},
		},
		{
			name: "allowed hosts from env",
			env:  map[string]string{"KILN_ALLOWED_HOSTS": "a.example,b.example"},
			want: func(c *server.Config) { c.AllowedHosts = []string{"a.example", "b.example"} },
		},
		{name: "inflight below body", args: []string{"--max-inflight-bytes", "10"}, wantErr: "max_inflight_bytes"},
		{name: "zero body timeout", args: []string{"--body-timeout", "0s"}, wantErr: "body_timeout"},
		{
			name: "serving profile and memory reclaim from env",
			env:  map[string]string{"KILN_SERVING_PROFILE": "maintenance", "KILN_MEMORY_RECLAIM": "on-demand"},
			want: func(c *server.Config) {
				c.ServingProfile, c.ProfileSource, c.MemoryReclaim = server.ProfileMaintenance, server.SourceEnv, server.ReclaimOnDemand
			},
		},
		{
			name: "serving profile flag wins over env",
			args: []string{"--serving-profile", "experimental", "--memory-reclaim", "automatic"},
			env:  map[string]string{"KILN_SERVING_PROFILE": "maintenance"},
			want: func(c *server.Config) {
				c.ServingProfile, c.ProfileSource, c.MemoryReclaim = server.ProfileExperimental, server.SourceFlag, server.ReclaimAutomatic
			},
		},
		{
			name: "prefix cache off and bounded",
			args: []string{"--prefix-cache", "off", "--prefix-cache-bytes", "512MiB"},
			want: func(c *server.Config) { c.Engine.PrefixCacheOff, c.Engine.PrefixCacheBytes = true, 512<<20 },
		},
		{
			name: "prefix cache from env",
			env:  map[string]string{"KILN_PREFIX_CACHE": "off", "KILN_PREFIX_CACHE_BYTES": "1.5GB"},
			want: func(c *server.Config) { c.Engine.PrefixCacheOff, c.Engine.PrefixCacheBytes = true, 1_500_000_000 },
		},
		{
			name: "prefix cache flag wins over env",
			args: []string{"--prefix-cache", "on", "--prefix-cache-bytes", "0"},
			env:  map[string]string{"KILN_PREFIX_CACHE": "off", "KILN_PREFIX_CACHE_BYTES": "2GiB"},
			want: func(*server.Config) {},
		},
		{name: "prefix cache neither on nor off", args: []string{"--prefix-cache", "true"}, wantErr: `invalid value "true" for flag -prefix-cache: "true" is not on or off`},
		{name: "prefix cache neither on nor off from env", env: map[string]string{"KILN_PREFIX_CACHE": "1"}, wantErr: `KILN_PREFIX_CACHE="1": "1" is not on or off`},
		{name: "prefix cache bytes without a unit's B", args: []string{"--prefix-cache-bytes", "512M"}, wantErr: `-prefix-cache-bytes: "512M" is not a size`},
		{name: "negative prefix cache bytes", env: map[string]string{"KILN_PREFIX_CACHE_BYTES": "-1"}, wantErr: "KILN_PREFIX_CACHE_BYTES"},
		{name: "bad serving profile", args: []string{"--serving-profile", "fast"}, wantErr: "serving_profile"},
		{name: "bad memory reclaim", env: map[string]string{"KILN_MEMORY_RECLAIM": "sometimes"}, wantErr: "KILN_MEMORY_RECLAIM"},
		{name: "bad env value", env: map[string]string{"KILN_QUEUE_DEPTH": "lots"}, wantErr: "KILN_QUEUE_DEPTH"},
		{name: "bad addr", args: []string{"--addr", "nowhere"}, wantErr: "addr"},
		{name: "negative engine value", args: []string{"--prefill-chunk", "-1"}, wantErr: "--prefill-chunk: must be at least 1"},
		{name: "zero prefill chunk", args: []string{"--prefill-chunk", "0"}, wantErr: "invalid value 0 for --prefill-chunk: must be at least 1"},
		{name: "zero prefill chunk from env", env: map[string]string{"KILN_PREFILL_CHUNK": "0"}, wantErr: "--prefill-chunk"},
		{name: "negative ring", args: []string{"--recent-requests", "-1"}, wantErr: "--recent-requests: must be in 0..100000"},
		{name: "negative kv budget", args: []string{"--kv-budget", "-5"}, wantErr: "--kv-budget: must be at least 0"},
		{name: "zero slots", args: []string{"--slots", "0"}, wantErr: "--slots: must be in 1..4096"},
		{name: "negative grace", args: []string{"--shutdown-grace", "-1s"}, wantErr: "--shutdown-grace: must be 0s or more"},
		{name: "bad cors origin", args: []string{"--cors-origin", "localhost:3000"}, wantErr: "cors_origin"},
		{name: "stray argument", args: []string{"extra"}, wantErr: "unexpected"},
		{name: "negative context", args: []string{"--context", "-8"}, wantErr: "context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			got, _, err := parseServeConfig(tt.args, getenv, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := server.DefaultConfig()
			tt.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAccessTokenSources: the token comes from the flag, KILN_ACCESS_TOKEN
// or --access-token-file (trimmed); only the flag is reported for the
// warning (a command line is visible to every local user), and two
// sources at once are an error.
func TestAccessTokenSources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("  from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantToken string
		wantCLI   bool
		wantErr   string
	}{
		{name: "flag", args: []string{"--access-token", "cli"}, wantToken: "cli", wantCLI: true},
		{name: "env", env: map[string]string{"KILN_ACCESS_TOKEN": "env"}, wantToken: "env"},
		{name: "flag over env", args: []string{"--access-token", "cli"}, env: map[string]string{"KILN_ACCESS_TOKEN": "env"}, wantToken: "cli", wantCLI: true},
		{name: "file", args: []string{"--access-token-file", file}, wantToken: "from-file"},
		{name: "file from env", env: map[string]string{"KILN_ACCESS_TOKEN_FILE": file}, wantToken: "from-file"},
		{name: "file and env", args: []string{"--access-token-file", file}, env: map[string]string{"KILN_ACCESS_TOKEN": "env"}, wantErr: "access_token_file"},
		{name: "empty file", args: []string{"--access-token-file", empty}, wantErr: "holds no token"},
		{name: "missing file", args: []string{"--access-token-file", file + ".none"}, wantErr: "access_token_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, extra, err := parseServeConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.AccessToken != tt.wantToken || extra.tokenOnCLI != tt.wantCLI {
				t.Errorf("token %q on command line %v, want %q %v", cfg.AccessToken, extra.tokenOnCLI, tt.wantToken, tt.wantCLI)
			}
		})
	}
}

// TestServeLogger: kiln serve logs through telemetry.NewLogger, so an
// event given a request's context carries its trace and span ids, and
// the configured level filters.
func TestServeLogger(t *testing.T) {
	var out bytes.Buffer
	tel, log, err := newTelemetry(telemetry.Config{}, &out, zerolog.InfoLevel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 1},
		SpanID:     trace.SpanID{0x00, 0xf0, 2},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	log.Debug().Ctx(ctx).Msg("filtered")
	log.Info().Ctx(ctx).Msg("kept")

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d log lines, want the info one only:\n%s", len(lines), out.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("not JSON (stderr is not a terminal): %v: %s", err, lines[0])
	}
	want := map[string]any{"message": "kept", "trace_id": sc.TraceID().String(), "span_id": sc.SpanID().String(), "level": "info"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (line %s)", k, got[k], v, lines[0])
		}
	}
}
