package telemetry

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestResourceFromEnv: OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME
// reach the resource of exported spans, over Kiln's defaults, and the
// SDK's detected attributes stay.
func TestResourceFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		cfg  Config
		want map[string]string
	}{
		{"defaults", nil, Config{ServiceVersion: "v9"},
			map[string]string{"service.name": "kiln", "service.version": "v9", "telemetry.sdk.language": "go"}},
		{"resource attributes", map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=staging,team=infra"}, Config{},
			map[string]string{"service.name": "kiln", "deployment.environment.name": "staging", "team": "infra"}},
		{"service.name in the attributes", map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attrs"}, Config{},
			map[string]string{"service.name": "from-attrs"}},
		{"OTEL_SERVICE_NAME wins", map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attrs", "OTEL_SERVICE_NAME": "from-name"}, Config{},
			map[string]string{"service.name": "from-name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
			t.Setenv("OTEL_SERVICE_NAME", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			h := newHarness(t, tc.cfg)
			_, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0})
			r.End(EndInfo{Outcome: OutcomeOK, End: at(msD)})
			spans := h.exp.GetSpans()
			if len(spans) == 0 {
				t.Fatal("no span exported")
			}
			got := map[string]string{}
			for _, kv := range spans[0].Resource.Attributes() {
				got[string(kv.Key)] = kv.Value.String()
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("resource %s = %q, want %q (resource %v)", k, got[k], v, got)
				}
			}
			for _, k := range []string{"process.pid", "process.runtime.name", "host.name"} {
				if got[k] == "" {
					t.Errorf("resource lacks the detected %s: %v", k, got)
				}
			}
			if _, ok := got["process.command_args"]; ok {
				t.Error("resource carries the command line, which may hold the access token")
			}
		})
	}
}

func TestNewPropagator(t *testing.T) {
	tests := []struct {
		spec   string
		fields []string // what the propagator injects
		ok     bool
	}{
		{"", []string{"baggage", "traceparent", "tracestate"}, true},
		{"tracecontext", []string{"traceparent", "tracestate"}, true},
		{"baggage, tracecontext", []string{"baggage", "traceparent", "tracestate"}, true},
		{"none", nil, true},
		{"b3", nil, false},
		{"none,tracecontext", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			p, err := NewPropagator(tc.spec)
			if (err == nil) != tc.ok {
				t.Fatalf("NewPropagator(%q) error %v, want ok %v", tc.spec, err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "OTEL_PROPAGATORS") {
					t.Errorf("error %v: want ErrInvalidConfig naming OTEL_PROPAGATORS", err)
				}
				return
			}
			got := p.Fields()
			if len(got) == 0 {
				got = nil
			}
			sortStrings(got)
			if d := cmp.Diff(tc.fields, got); d != "" {
				t.Errorf("fields (-want +got):\n%s", d)
			}
		})
	}
	// The propagator in use reads a W3C traceparent.
	h := newHarness(t, Config{Propagators: "tracecontext"})
	carrier := propagation.HeaderCarrier(http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
	if sc := spanContextOf(h.tel.Propagator().Extract(context.Background(), carrier)); sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("extracted trace id %s", sc.TraceID())
	}
}

func TestConfigFromEnvOTelSwitches(t *testing.T) {
	env := map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_PROPAGATORS": "tracecontext", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}
	c, err := ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if !c.SDKDisabled || c.Propagators != "tracecontext" {
		t.Errorf("config %+v: want SDKDisabled and the propagators", c)
	}
	env["OTEL_SDK_DISABLED"] = "maybe"
	if _, err := ConfigFromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "OTEL_SDK_DISABLED") {
		t.Errorf("OTEL_SDK_DISABLED=maybe: error %v", err)
	}
	env["OTEL_SDK_DISABLED"], env["OTEL_PROPAGATORS"] = "false", "xray"
	if _, err := ConfigFromEnv(func(k string) string { return env[k] }); err == nil {
		t.Error("OTEL_PROPAGATORS=xray accepted")
	}
}

func TestErrorHandlerLogs(t *testing.T) {
	var buf bytes.Buffer
	ErrorHandler(zerolog.New(&buf)).Handle(errors.New("export failed: connection refused"))
	if !strings.Contains(buf.String(), `"level":"warn"`) || !strings.Contains(buf.String(), "connection refused") {
		t.Errorf("log %q: want a warning carrying the error", buf.String())
	}
}

// TestErrorType: a request that did not end ok carries error.type.
func TestErrorType(t *testing.T) {
	h := newHarness(t, Config{})
	for _, o := range []Outcome{OutcomeOK, OutcomeTimeout} {
		_, r := h.tel.StartRequest(context.Background(), RequestInfo{Model: "m", Received: t0, Operation: OperationTextCompletion})
		r.End(EndInfo{Outcome: o, End: at(msD)})
	}
	var got []any
	for _, s := range h.exp.GetSpans() {
		if s.Name != OperationTextCompletion+" m" {
			continue
		}
		a := attrMap(s.Attributes)
		got = append(got, a[AttrErrorType])
		if a[AttrGenAIOperationName] != OperationTextCompletion || a[AttrGenAIProviderName] != ProviderName {
			t.Errorf("operation %v provider %v", a[AttrGenAIOperationName], a[AttrGenAIProviderName])
		}
	}
	if d := cmp.Diff([]any{nil, "timeout"}, got); d != "" {
		t.Errorf("error.type of ok and timeout requests (-want +got):\n%s", d)
	}
}

// TestProcessMetrics: /metrics has the process_* and go_* families and
// exactly one kiln_build_info series with its three labels.
func TestProcessMetrics(t *testing.T) {
	h := newHarness(t, Config{ServiceVersion: "v1.2.3"})
	text := h.scrapeAll(t, "")
	for _, fam := range []string{"process_cpu_seconds_total", "process_resident_memory_bytes", "go_goroutines", "go_memstats_alloc_bytes"} {
		if !regexp.MustCompile(`(?m)^` + fam + ` `).MatchString(text) {
			t.Errorf("/metrics lacks %s", fam)
		}
	}
	series := regexp.MustCompile(`(?m)^kiln_build_info\{(.*)\} 1$`).FindAllStringSubmatch(text, -1)
	if len(series) != 1 {
		t.Fatalf("kiln_build_info series: %v, want exactly one", series)
	}
	labels := series[0][1]
	for _, re := range []string{`version="v1\.2\.3"`, `revision="[^"]+"`, `goversion="go1\.[^"]+"`} {
		if !regexp.MustCompile(re).MatchString(labels) {
			t.Errorf("kiln_build_info{%s} lacks %s", labels, re)
		}
	}
}

func sortStrings(s []string) { slices.Sort(s) }

func spanContextOf(ctx context.Context) trace.SpanContext { return trace.SpanContextFromContext(ctx) }
