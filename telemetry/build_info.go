package telemetry

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// BuildInfoMetric is the build identity gauge: always 1, with the
// version, VCS revision and Go version as labels (one series per
// process).
const BuildInfoMetric = "kiln_build_info"

// registerProcessMetrics adds the standard process_* and go_* collectors
// and kiln_build_info to reg.
func registerProcessMetrics(reg *prometheus.Registry, version string) error {
	revision := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if version == "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	if version == "" {
		version = "unknown"
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: BuildInfoMetric,
		Help: "Kiln's build: always 1, labelled with the version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{
			"version":   version,
			"revision":  revision,
			"goversion": runtime.Version(),
		},
	})
	info.Set(1)
	for _, c := range []prometheus.Collector{
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
		info,
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("telemetry: registering process metrics: %w", err)
		}
	}
	return nil
}
