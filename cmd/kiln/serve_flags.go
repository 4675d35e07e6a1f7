package main

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kiln-ai/kiln/server"
)

// serveAPIFlags binds the flags of the API surface that serveFlags does
// not: the adapter directory, the served model name and the CORS origins.
func serveAPIFlags(fs *flag.FlagSet, cfg *server.Config) {
	fs.StringVar(&cfg.AdapterDir, "adapter-dir", cfg.AdapterDir,
		"directory of LoRA adapters (PEFT subdirectories and .gguf files) that requests and /v1/adapters name")
	fs.Int64Var(&cfg.AdapterCacheBytes, "adapter-cache-bytes", cfg.AdapterCacheBytes,
		"memory of the adapters kept loaded between requests; past it the least recently used are read again when next named (the server default is always kept)")
	fs.DurationVar(&cfg.MaintenanceSlice, "maintenance-slice", cfg.MaintenanceSlice,
		"longest exclusive hold of a training step's slice before waiting requests run (0: whole steps)")
	fs.StringVar(&cfg.TrainDataDir, "train-data-dir", cfg.TrainDataDir,
		"directory whose JSONL files POST /v1/train/sft's dataset_path may name (default: dataset_path refused)")
	fs.StringVar(&cfg.ServedModelName, "served-model-name", cfg.ServedModelName,
		"model id that clients name and see (default: the model file's stem, the directory's name or kiln-tiny)")
	fs.Func("cors-origin", "browser origin allowed to call the API, e.g. http://localhost:3000 (repeatable or comma-separated; * allows any; default: CORS off)",
		func(v string) error {
			for o := range strings.SplitSeq(v, ",") {
				if o = strings.TrimSpace(o); o != "" {
					cfg.CORSOrigins = append(cfg.CORSOrigins, o)
				}
			}
			return nil
		})
}

// prefixCacheFlag is --prefix-cache: on (the default) or off, stored as
// engine.Config.PrefixCacheOff.
type prefixCacheFlag struct{ off *bool }

func (f prefixCacheFlag) String() string {
	switch {
	case f.off == nil:
		return "" // the zero value flag compares with, so the help prints the default
	case *f.off:
		return "off"
	}
	return "on"
}

func (f prefixCacheFlag) Set(v string) error {
	switch v {
	case "on":
		*f.off = false
	case "off":
		*f.off = true
	default:
		return fmt.Errorf("%q is not on or off", v)
	}
	return nil
}

// intRange is the valid range of an integer flag.
type intRange struct {
	flag     string
	v        int64
	min, max int64
}

// checkServeRanges refuses flag values outside their valid range with a
// message that names the flag and states the range, before anything
// starts. Zero keeps its documented meaning where it has one (--max-batch
// 0: all slots); where it has none (--prefill-chunk 0 would never prefill)
// it is refused.
func checkServeRanges(cfg server.Config, extra serveExtra) error {
	const unbounded = math.MaxInt64
	ints := []intRange{
		{"prefill-chunk", int64(cfg.Engine.PrefillChunk), 1, unbounded},
		{"queue-depth", int64(cfg.Engine.QueueDepth), 1, unbounded},
		{"delivery-buffer", int64(cfg.Engine.DeliveryBuffer), 1, unbounded},
		{"max-batch", int64(cfg.Engine.MaxBatch), 0, unbounded},
		{"kv-budget", int64(cfg.Engine.KVBudget), 0, unbounded},
		{"kv-max-tokens", int64(cfg.Engine.KVMaxTokens), 0, unbounded},
		{"slots", int64(extra.slots), 1, 4096},
		{"threads", int64(cfg.Threads), 0, 4096},
		{"max-streams", int64(cfg.MaxStreams), 0, unbounded},
		{"recent-requests", int64(cfg.RecentRequests), 0, 100000},
		{"responses-store", int64(cfg.ResponseStore), 0, 100000},
		{"max-body-bytes", cfg.MaxBodyBytes, 1, unbounded},
		{"adapter-cache-bytes", cfg.AdapterCacheBytes, 0, unbounded},
	}
	for _, r := range ints {
		if r.v >= r.min && r.v <= r.max {
			continue
		}
		valid := fmt.Sprintf("at least %d", r.min)
		if r.max != unbounded {
			valid = fmt.Sprintf("in %d..%d", r.min, r.max)
		}
		return fmt.Errorf("invalid value %d for --%s: must be %s", r.v, r.flag, valid)
	}
	durs := []struct {
		flag string
		v    time.Duration
	}{
		{"shutdown-grace", cfg.ShutdownGrace}, {"retry-after", cfg.RetryAfter},
		{"evict-grace", cfg.Engine.EvictGrace}, {"cycle-idle", cfg.Engine.CycleIdle},
		{"maintenance-slice", cfg.MaintenanceSlice},
	}
	for _, d := range durs {
		if d.v < 0 {
			return fmt.Errorf("invalid value %s for --%s: must be 0s or more", d.v, d.flag)
		}
	}
	return nil
}
