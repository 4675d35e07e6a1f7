package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
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
			args: []string{"--addr", "127.0.0.1:1", "--recent-requests", "5", "--recent-request-text", "--queue-depth", "3", "--max-batch", "2", "--kv-budget", "4096", "--delivery-buffer", "8", "--cycle-idle", "1ms", "--threads", "2"},
			env:  map[string]string{"KILN_ADDR": "0.0.0.0:9000", "KILN_RECENT_REQUESTS": "50"},
			want: func(c *server.Config) {
				c.Addr, c.RecentRequests, c.RecentRequestText = "127.0.0.1:1", 5, true
				c.Engine.QueueDepth, c.Engine.MaxBatch, c.Engine.KVBudget, c.Engine.DeliveryBuffer = 3, 2, 4096, 8
				c.Engine.CycleIdle, c.Threads = time.Millisecond, 2
			},
		},
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
		{name: "bad serving profile", args: []string{"--serving-profile", "fast"}, wantErr: "serving_profile"},
		{name: "bad memory reclaim", env: map[string]string{"KILN_MEMORY_RECLAIM": "sometimes"}, wantErr: "KILN_MEMORY_RECLAIM"},
		{name: "bad env value", env: map[string]string{"KILN_QUEUE_DEPTH": "lots"}, wantErr: "KILN_QUEUE_DEPTH"},
		{name: "bad addr", args: []string{"--addr", "nowhere"}, wantErr: "addr"},
		{name: "negative engine value", args: []string{"--prefill-chunk", "-1"}, wantErr: "prefill_chunk"},
		{name: "negative ring", args: []string{"--recent-requests", "-1"}, wantErr: "recent_requests"},
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
