package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/schemas"
)

// TestLoadedModelFacts: /v1/config's loaded_model and trace_export and
// the /v1/models entries say what was loaded, for the embedded model and a
// quantized reference GGUF, each response matching its schema.
func TestLoadedModelFacts(t *testing.T) {
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	type facts struct {
		Format, Arch    string
		HasFile         bool
		Mapped          bool
		Context, Own    int
		Types           []string
		KVSlotIsContext bool
	}
	gguf := filepath.Join(refDir(t), "tiny-llama.Q4_K_M.gguf")
	st, err := os.Stat(gguf)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, model string
		want        facts
		fileBytes   int64
	}{
		{"kiln-tiny", "", facts{"embedded", "llama", false, false, 2048, 2048, []string{"f32"}, true}, 0},
		{"q4_k_m gguf", gguf, facts{"gguf", "llama", true, true, 0, 0, []string{"f32", "q4_k", "q6_k"}, true}, st.Size()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(s *harnessSetup) {
				s.model = tc.model
				s.cfg.TraceExport = TraceExport{Endpoint: "https://user:secret@collector:4318/v1/traces?token=x", Protocol: "http/protobuf"}
			})
			var cfg struct {
				Loaded ModelFacts     `json:"loaded_model"`
				Trace  map[string]any `json:"trace_export"`
			}
			body := h.getJSON("/v1/config", &cfg)
			if err := v.Validate(schemas.ObservabilityID, "config", body); err != nil {
				t.Errorf("/v1/config does not match its schema: %v\n%s", err, body)
			}
			l := cfg.Loaded
			var types []string
			for _, k := range []string{"f32", "q4_k", "q6_k", "q8_0"} {
				if l.WeightTypes[k] > 0 {
					types = append(types, k)
				}
			}
			got := facts{l.Format, l.Architecture, l.FileBytes != nil, l.MappedBytes > 0, l.Context, l.ModelContext, types,
				l.KVBytesPerSlot == l.KVBytesPerToken*int64(l.Context)}
			if tc.want.Context == 0 { // the reference GGUF's own, under the default cap
				tc.want.Context, tc.want.Own = h.model.Model.Config.SeqLen, h.model.Model.OwnContext()
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("loaded_model (-want +got):\n%s\n%s", d, body)
			}
			if l.FileBytes != nil && *l.FileBytes != tc.fileBytes {
				t.Errorf("file_bytes %d, want the file's %d", *l.FileBytes, tc.fileBytes)
			}
			if l.Parameters != h.model.Model.Params() || l.Parameters <= 0 {
				t.Errorf("parameters %d, want %d", l.Parameters, h.model.Model.Params())
			}
			wantTrace := map[string]any{"enabled": true, "endpoint": "https://collector:4318/v1/traces", "protocol": "http/protobuf"}
			if d := cmp.Diff(wantTrace, cfg.Trace); d != "" {
				t.Errorf("trace_export (-want +got), credentials must not appear:\n%s", d)
			}

			var list struct {
				Data []struct {
					MaxModelLen int            `json:"max_model_len"`
					Meta        map[string]int `json:"meta"`
				} `json:"data"`
			}
			body = h.getJSON("/v1/models", &list)
			if err := v.Validate(schemas.InferenceID, "model_list", body); err != nil {
				t.Errorf("/v1/models does not match its schema: %v\n%s", err, body)
			}
			if err := v.Validate(schemas.InferenceID, "model", h.getJSON("/v1/models/"+h.srv.modelID, nil)); err != nil {
				t.Errorf("/v1/models/{id} does not match its schema: %v", err)
			}
			m := list.Data[0]
			wantMeta := map[string]int{"n_ctx_train": l.ModelContext, "n_params": int(l.Parameters), "size": int(l.WeightBytes),
				"n_vocab": l.Vocab, "n_embd": h.model.Model.Config.Dim}
			if m.MaxModelLen != l.Context || cmp.Diff(wantMeta, m.Meta) != "" {
				t.Errorf("/v1/models max_model_len %d, meta %v; want %d, %v", m.MaxModelLen, m.Meta, l.Context, wantMeta)
			}
		})
	}
	t.Run("trace export off", func(t *testing.T) {
		h := newHarness(t)
		var cfg struct {
			Trace map[string]any `json:"trace_export"`
		}
		h.getJSON("/v1/config", &cfg)
		if d := cmp.Diff(map[string]any{"enabled": false, "endpoint": nil, "protocol": nil}, cfg.Trace); d != "" {
			t.Errorf("trace_export (-want +got):\n%s", d)
		}
	})
}
