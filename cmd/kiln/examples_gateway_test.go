package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kiln-ai/kiln/telemetry"
)

var (
	// kilnMetricRE finds a kiln metric name in any text.
	kilnMetricRE = regexp.MustCompile(`\bkiln_[a-z0-9_]*[a-z0-9]`)
	// pickerSpecRE finds what the Endpoint Picker is told to read for each
	// protocol metric: the flag form of its v1 releases and the key of its
	// data layer's engineConfigs. The value is the name, or empty (off).
	pickerSpecRE = regexp.MustCompile(`(?m)(?:--(total-queued-requests|total-running-requests|kv-cache-usage-percentage|lora-info|cache-info)-metric=|\b(queuedRequestsSpec|runningRequestsSpec|kvUsageSpec|loraSpec|cacheInfoSpec):[ \t]*)("[^"\n]*"|[^\s"]*)`)
)

// pickerRoles maps each way of naming a protocol metric to its role; the
// three gauges have kiln's names, the two others are off.
var pickerRoles = map[string]string{
	"total-queued-requests":     telemetry.MetricQueuedRequests,
	"queuedRequestsSpec":        telemetry.MetricQueuedRequests,
	"total-running-requests":    telemetry.MetricRunningRequests,
	"runningRequestsSpec":       telemetry.MetricRunningRequests,
	"kv-cache-usage-percentage": telemetry.MetricKVUtilization,
	"kvUsageSpec":               telemetry.MetricKVUtilization,
	"lora-info":                 "",
	"loraSpec":                  "",
	"cache-info":                "",
	"cacheInfoSpec":             "",
}

// TestGatewayExampleMetrics: every kiln metric that examples/gateway names
// (its README and manifests) is exposed by a running kiln serve's /metrics;
// wherever the example tells the Endpoint Picker which metric to read, it
// names the right gauge for the role (queued, running, KV utilisation) and
// switches the LoRA and cache-info metrics off; each of the three is one
// unlabelled gauge series, the only form the picker reads; and the kiln
// replicas' arguments are flags kiln serve has.
func TestGatewayExampleMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	dir := filepath.Join(repoRoot(t), "examples", "gateway")
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	srv := startServe(t)
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	exposed := func(name string) bool {
		if fams[name] != nil {
			return true
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && fams[base] != nil && fams[base].GetType() == dto.MetricType_HISTOGRAM {
				return true
			}
		}
		return false
	}
	roles := map[string]int{} // role key -> times the example sets it
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		for _, m := range slices.Compact(slices.Sorted(slices.Values(kilnMetricRE.FindAllString(string(b), -1)))) {
			if !exposed(m) {
				t.Errorf("%s names %s, which kiln serve's /metrics does not expose", name, m)
			}
		}
		for _, m := range pickerSpecRE.FindAllStringSubmatch(string(b), -1) {
			key := m[1] + m[2]
			value := strings.Trim(m[3], `"`)
			roles[key]++
			if want := pickerRoles[key]; value != want {
				t.Errorf("%s tells the picker %s = %q, want %q", name, key, value, want)
			}
			if value == "" {
				continue
			}
			mf := fams[value]
			if mf == nil || mf.GetType() != dto.MetricType_GAUGE || len(mf.GetMetric()) != 1 || len(mf.GetMetric()[0].GetLabel()) != 0 {
				t.Errorf("%s: the picker reads %s for %s, which is not one unlabelled gauge series: %v", name, value, key, mf)
			}
		}
	}
	for key := range pickerRoles {
		if roles[key] == 0 {
			t.Errorf("examples/gateway never sets the picker's %s", key)
		}
	}

	// The replicas' kiln serve arguments.
	flags := kilnFlags(t)
	b, err := os.ReadFile(filepath.Join(dir, "kiln.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range regexp.MustCompile(`(?m)^\s*-\s+--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(string(b), -1) {
		n++
		if !flags[m[1]] {
			t.Errorf("kiln.yaml passes --%s, which kiln serve does not have", m[1])
		}
	}
	if n == 0 {
		t.Error("kiln.yaml passes kiln serve no flag: the pattern no longer finds them")
	}
}
