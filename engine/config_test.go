package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     engine.Config
		wantKey string // "" means valid
	}{
		{"zero takes defaults", engine.Config{}, ""},
		{"defaults", engine.DefaultConfig(), ""},
		{"negative queue", engine.Config{QueueDepth: -1}, "queue_depth"},
		{"negative batch", engine.Config{MaxBatch: -1}, "max_batch"},
		{"negative budget", engine.Config{KVBudget: -5}, "kv_budget"},
		{"negative chunk", engine.Config{PrefillChunk: -1}, "prefill_chunk"},
		{"negative buffer", engine.Config{DeliveryBuffer: -1}, "delivery_buffer"},
		{"negative grace", engine.Config{EvictGrace: -time.Second}, "evict_grace"},
		{"negative idle", engine.Config{CycleIdle: -time.Millisecond}, "cycle_idle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != (tc.wantKey == "") || (err != nil && !strings.Contains(err.Error(), tc.wantKey)) {
				t.Errorf("Validate() = %v, want an error naming %q", err, tc.wantKey)
			}
		})
	}
}

func TestNewResolvesAgainstBackend(t *testing.T) {
	b := enginetest.NewBackend(4, 100, 64)
	tests := []struct {
		name    string
		cfg     engine.Config
		want    engine.Config
		wantErr string
	}{
		{"backend sizes", engine.Config{}, engine.Config{
			QueueDepth: engine.DefaultQueueDepth, MaxBatch: 4, KVBudget: 400, PrefillChunk: engine.DefaultPrefillChunk,
			DeliveryBuffer: engine.DefaultDeliveryBuffer, EvictGrace: engine.DefaultEvictGrace,
		}, ""},
		{"batch above slots", engine.Config{MaxBatch: 5}, engine.Config{}, "max_batch"},
		{"budget below a context", engine.Config{KVBudget: 99}, engine.Config{}, "kv_budget"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := engine.New(b, tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New = %v, want an error naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, e.Config()); d != "" {
				t.Errorf("resolved config (-want +got):\n%s", d)
			}
		})
	}
}
