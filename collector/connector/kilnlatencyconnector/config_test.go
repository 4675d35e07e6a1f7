package kilnlatencyconnector

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

func TestConfigFromYAML(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id        component.ID
		want      *Config
		unmarshal bool // Unmarshal fails
		invalid   bool // Validate fails
	}{
		{id: component.NewID(componentType), want: &Config{FlushInterval: defaultFlushInterval}},
		{id: component.NewIDWithName(componentType, "fast"), want: &Config{FlushInterval: time.Second}},
		{id: component.NewIDWithName(componentType, "too_fast"), want: &Config{FlushInterval: time.Millisecond}, invalid: true},
		{id: component.NewIDWithName(componentType, "unknown_key"), unmarshal: true},
	}
	for _, tc := range tests {
		t.Run(tc.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig().(*Config)
			sub, err := cm.Sub(tc.id.String())
			if err != nil {
				t.Fatal(err)
			}
			err = sub.Unmarshal(cfg)
			if tc.unmarshal {
				if err == nil {
					t.Fatal("Unmarshal accepted an unknown key")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, cfg, cmp.AllowUnexported(Config{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			err = cfg.Validate()
			if tc.invalid != (err != nil) {
				t.Fatalf("Validate() = %v, want invalid %v", err, tc.invalid)
			}
			if tc.invalid && !errors.Is(err, errFlushInterval) {
				t.Errorf("Validate() = %v, want errFlushInterval", err)
			}
		})
	}
}

func TestConfigStruct(t *testing.T) {
	if err := componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
}
