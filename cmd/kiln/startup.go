package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rs/zerolog"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/server"
	"github.com/kiln-ai/kiln/telemetry"
)

// traceExport is where tcfg sends spans, as /v1/config reports it: off
// when no endpoint is set or OTEL_SDK_DISABLED says so. The headers are
// not carried.
func traceExport(tcfg telemetry.Config) server.TraceExport {
	if tcfg.SDKDisabled || tcfg.OTLPTracesEndpoint == "" {
		return server.TraceExport{}
	}
	proto := tcfg.OTLPProtocol
	if proto == "" {
		proto = telemetry.ProtocolHTTP
	}
	return server.TraceExport{Endpoint: tcfg.OTLPTracesEndpoint, Protocol: proto}
}

// openModel opens the --model of subcommand cmd with its --context,
// naming a path that is not a model by what it is (modelError) and passing
// warn the contextWarning of a --context the model does not run with.
func openModel(cmd, spec string, context int, warn func(w string, l *llama.Loaded)) (*llama.Loaded, error) {
	l, err := llama.OpenWith(spec, llama.OpenOptions{Context: context})
	if err != nil {
		return nil, modelError(cmd, spec, err)
	}
	if w := contextWarning(context, l); w != "" {
		warn(w, l)
	}
	return l, nil
}

// printWarning is openModel's warn for a command that reports on stderr.
func printWarning(stderr io.Writer, cmd string) func(string, *llama.Loaded) {
	return func(w string, _ *llama.Loaded) { fmt.Fprintf(stderr, "kiln %s: warning: %s\n", cmd, w) }
}

// contextWarning is the warning of a --context the model does not run
// with (above its own context, which caps it; or given to a model whose
// context is fixed), naming both numbers; "" when it runs with what was
// asked, or nothing was.
func contextWarning(requested int, l *llama.Loaded) string {
	got := l.Model.Config.SeqLen
	if requested == 0 || requested == got {
		return ""
	}
	own := l.Model.OwnContext()
	if requested > own {
		return fmt.Sprintf("--context %d is above the model's own context of %d: capped at %d", requested, own, got)
	}
	return fmt.Sprintf("--context %d does not apply to %s, whose context is fixed (%s): running with %d",
		requested, l.ID, l.Format, got)
}

// announce logs the ready line and, when stderr is a terminal, prints its
// facts for a person beside it.
func announce(stderr io.Writer, log *zerolog.Logger, f server.ModelFacts, cfg server.Config, slots int) {
	logServing(log, f, cfg, slots)
	if isTerminal(stderr) {
		printSummary(stderr, f, cfg, slots)
	}
}

// logServing writes the ready line: what was loaded and how it is served,
// as fields (null where a fact does not apply).
func logServing(log *zerolog.Logger, f server.ModelFacts, cfg server.Config, slots int) {
	te := cfg.TraceExport
	var endpoint *string
	if te.Endpoint != "" {
		ep := server.RedactEndpoint(te.Endpoint)
		endpoint = &ep
	}
	var cacheBytes *int64 // null: bounded by the free KV budget alone
	if b := cfg.Engine.PrefixCacheBytes; b > 0 {
		cacheBytes = &b
	}
	log.Info().Str("model", f.ID).Str("format", f.Format).Str("architecture", f.Architecture).
		Int64("parameters", f.Parameters).Interface("weight_types", f.WeightTypes).Int64("weight_bytes", f.WeightBytes).
		Interface("file_bytes", f.FileBytes).Int("context", f.Context).Int("model_context", f.ModelContext).
		Int64("kv_bytes_per_token", f.KVBytesPerToken).Int64("kv_bytes_per_slot", f.KVBytesPerSlot).
		Interface("recurrent_bytes_per_slot", f.RecurrentBytes).
		Int64("mapped_bytes", f.MappedBytes).Interface("resident_bytes", f.ResidentBytes).
		Int("slots", slots).Int("threads", cfg.Threads).Str("kernels", cfg.KernelPath).Str("cpu_features", cfg.CPUFeatures).
		Str("adapter_dir", cfg.AdapterDir).Str("serving_profile", string(cfg.ServingProfile)).
		Bool("trace_export", te.Endpoint != "").Interface("trace_endpoint", endpoint).
		Bool("prefix_cache", !cfg.Engine.PrefixCacheOff).Interface("prefix_cache_bytes", cacheBytes).
		Str("addr", cfg.Addr).Msg("kiln serving")
}

// printSummary writes the ready line's facts for a person reading a
// terminal.
func printSummary(w io.Writer, f server.ModelFacts, cfg server.Config, slots int) {
	file := "embedded, no file"
	if f.FileBytes != nil {
		file = fmt.Sprintf("%s file, %s mapped", bytesText(*f.FileBytes), bytesText(f.MappedBytes))
	}
	rss := "unknown"
	if f.ResidentBytes != nil {
		rss = bytesText(*f.ResidentBytes)
	}
	trace := "off"
	if cfg.TraceExport.Endpoint != "" {
		trace = server.RedactEndpoint(cfg.TraceExport.Endpoint) + " (" + cfg.TraceExport.Protocol + ")"
	}
	fmt.Fprintf(w, "kiln serving %s on http://%s\n", f.ID, cfg.Addr)
	fmt.Fprintf(w, "  model    %s %s, %s parameters, weights %s (%s; %s)\n",
		f.Format, f.Architecture, countText(f.Parameters), typesText(f.WeightTypes), bytesText(f.WeightBytes), file)
	fmt.Fprintf(w, "  context  %d of the model's %d; KV %s a token, %s a slot, %d slots\n",
		f.Context, f.ModelContext, bytesText(f.KVBytesPerToken), bytesText(f.KVBytesPerSlot), slots)
	if f.RecurrentBytes != nil {
		fmt.Fprintf(w, "  state    %s of recurrent state a slot, whatever its length\n", bytesText(*f.RecurrentBytes))
	}
	fmt.Fprintf(w, "  memory   %s resident\n", rss)
	fmt.Fprintf(w, "  serving  profile %s, adapters in %s, %d threads (%s), trace export %s\n",
		cfg.ServingProfile, cfg.AdapterDir, cfg.Threads, cfg.KernelPath, trace)
}

// typesText is "q4_k x154, f32 x65", the most tensors first.
func typesText(types map[string]int) string {
	names := make([]string, 0, len(types))
	for k := range types {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if types[names[i]] != types[names[j]] {
			return types[names[i]] > types[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s x%d", k, types[k])
	}
	return strings.Join(parts, ", ")
}

// bytesText is n in binary units ("1.5 MiB").
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[i-1])
}

// countText is n with a metric suffix ("15.2M").
func countText(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
