package telemetry

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{name: "nothing set: OTLP off", want: Config{OTLPProtocol: ProtocolHTTP, SamplerArg: 1}},
		{
			name: "generic endpoint over HTTP gets /v1/traces",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/", "OTEL_SERVICE_NAME": "k"},
			want: Config{ServiceName: "k", OTLPTracesEndpoint: "http://collector:4318/v1/traces", OTLPProtocol: ProtocolHTTP, SamplerArg: 1},
		},
		{
			name: "traces endpoint wins and is used as is",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:4318/custom"},
			want: Config{OTLPTracesEndpoint: "http://b:4318/custom", OTLPProtocol: ProtocolHTTP, SamplerArg: 1},
		},
		{
			name: "grpc endpoint is not suffixed; traces protocol wins",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
			want: Config{OTLPTracesEndpoint: "http://a:4317", OTLPProtocol: ProtocolGRPC, SamplerArg: 1},
		},
		{
			name: "sampler and ratio",
			env:  map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"},
			want: Config{OTLPProtocol: ProtocolHTTP, Sampler: SamplerParentBasedTraceIDRate, SamplerArg: 0.25},
		},
		{name: "bad protocol names the key", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantErr: "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{name: "bad sampler names the key", env: map[string]string{"OTEL_TRACES_SAMPLER": "jaeger_remote"}, wantErr: "OTEL_TRACES_SAMPLER"},
		{name: "unparsable ratio names the key", env: map[string]string{"OTEL_TRACES_SAMPLER_ARG": "half"}, wantErr: "OTEL_TRACES_SAMPLER_ARG"},
		{name: "ratio out of range names the key", env: map[string]string{"OTEL_TRACES_SAMPLER_ARG": "1.5"}, wantErr: "OTEL_TRACES_SAMPLER_ARG"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	for _, c := range []Config{{Sampler: "x"}, {OTLPProtocol: "udp"}, {SamplerArg: 2}} {
		if _, err := New(c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", c, err)
		}
	}
}

// FuzzConfigFromEnv: any environment either parses into a config that
// validates, or fails with ErrInvalidConfig; never a panic.
func FuzzConfigFromEnv(f *testing.F) {
	f.Add("http://c:4318", "grpc", "traceidratio", "0.5")
	f.Add("", "bogus", "always_on", "x")
	f.Fuzz(func(t *testing.T, endpoint, proto, sampler, arg string) {
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": proto,
			"OTEL_TRACES_SAMPLER": sampler, "OTEL_TRACES_SAMPLER_ARG": arg}
		c, err := ConfigFromEnv(func(k string) string { return env[k] })
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed config does not validate: %v", err)
		}
		if (endpoint != "") != (c.OTLPTracesEndpoint != "") {
			t.Fatalf("endpoint %q gave %q", endpoint, c.OTLPTracesEndpoint)
		}
	})
}
