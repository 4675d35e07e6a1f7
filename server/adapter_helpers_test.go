package server

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/testshared"
	"github.com/kiln-ai/kiln/kernels"
	"github.com/kiln-ai/kiln/schemas"
	"github.com/kiln-ai/kiln/telemetry"
)

// refDir is ../shared/models/ref (testshared.Require: skipped when absent,
// a failure where CI is set).
func refDir(t testing.TB) string {
	t.Helper()
	return filepath.Dir(testshared.Require(t, "models", "ref", "tiny-llama.lora-r8.F32.gguf"))
}

// adapterDir builds a temporary adapter directory from the reference
// LoRA (rank 8, alpha 16, for tiny-llama): lora.gguf (the GGUF layout),
// peft/ (the PEFT layout), broken/ (a PEFT config with a weights file that
// is not safetensors), notlora.gguf (a base model, not an adapter),
// misfit/ (a PEFT config saying rank 4 beside rank-8 weights).
func adapterDir(t testing.TB, ref string) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, filepath.Join(ref, "tiny-llama.lora-r8.F32.gguf"), filepath.Join(dir, "lora.gguf"))
	for _, f := range []string{"adapter_config.json", "adapter_model.safetensors"} {
		copyFile(t, filepath.Join(ref, "tiny-llama.lora-r8.peft", f), filepath.Join(dir, "peft", f))
	}
	copyFile(t, filepath.Join(ref, "tiny-llama.lora-r8.peft", "adapter_config.json"), filepath.Join(dir, "broken", "adapter_config.json"))
	if err := os.WriteFile(filepath.Join(dir, "broken", "adapter_model.safetensors"), []byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":1}"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(ref, "tiny-llama.Q4_0.gguf"), filepath.Join(dir, "notlora.gguf"))
	cfg, err := os.ReadFile(filepath.Join(ref, "tiny-llama.lora-r8.peft", "adapter_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(cfg, &c); err != nil {
		t.Fatal(err)
	}
	c["r"] = 4 // the weights stay rank 8: every shape misfits
	cfg, err = json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(ref, "tiny-llama.lora-r8.peft", "adapter_model.safetensors"), filepath.Join(dir, "misfit", "adapter_model.safetensors"))
	if err := os.WriteFile(filepath.Join(dir, "misfit", "adapter_config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// withAdapterModel serves tiny-llama.F32 with the adapters of dir.
func withAdapterModel(ref, dir string) harnessOption {
	return func(s *harnessSetup) {
		s.model = filepath.Join(ref, "tiny-llama.F32.gguf")
		s.cfg.AdapterDir = dir
	}
}

// greedyRef is the greedy continuation of prompt for n tokens (ending
// early after a stop id, which is included), computed on a fresh state of
// m with adapter a (nil: base), without the engine: what one request alone
// gets.
func greedyRef(t testing.TB, m *llama.Model, a *llama.Adapter, prompt []int, n int, stops []int) []int {
	t.Helper()
	pool := kernels.NewPool(1)
	defer pool.Close()
	st := m.NewState(1, pool)
	st.SetAdapter(a)
	logits := [][]float32{make([]float32, m.Config.Vocab)}
	rows := make([]llama.Row, len(prompt))
	for i, id := range prompt {
		rows[i] = llama.Row{Slot: 0, Pos: i, Token: id, Logits: i == len(prompt)-1}
	}
	var out []int
	for len(out) < n {
		st.Forward(rows, logits)
		best := 0
		for i, v := range logits[0] {
			if v > logits[0][best] {
				best = i
			}
		}
		out = append(out, best)
		if slices.Contains(stops, best) {
			break
		}
		rows = []llama.Row{{Slot: 0, Pos: len(prompt) + len(out) - 1, Token: best, Logits: true}}
	}
	return out
}

// streamedIDs are the token ids of a stream's kiln.token_timing events.
func streamedIDs(t testing.TB, p streamParts) []int {
	t.Helper()
	ids := make([]int, len(p.events))
	for i, e := range p.events {
		ids[i] = int(num(t, e["token_id"]))
	}
	return ids
}

// errorCode is the code of an OpenAI-shaped error body.
func errorCode(t testing.TB, body []byte) (code, message string) {
	t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return e.Error.Code, e.Error.Message
}

// checkRunningAdapter fails unless /health and /v1/config (each matching
// its schema) name the adapter the engine runs with, name ("base" for
// none) with its revision (sha256, or "base"), and the label-free gauges
// agree with them: kiln_adapter_active is 1 for an adapter and 0 for base,
// kiln_adapter_revision is the revision_number /health reports.
func checkRunningAdapter(t *testing.T, h *harness, name, revision string) {
	t.Helper()
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	want := runningAdapterJSON{Name: name, Revision: revision, RevisionNumber: telemetry.AdapterRevisionNumber(revision)}
	if (name == baseAdapter) != (want.RevisionNumber == 0) {
		t.Errorf("adapter %s revision %q has revision number %d", name, revision, want.RevisionNumber)
	}
	for _, path := range []string{"/health", "/v1/config"} {
		var got struct {
			Adapter runningAdapterJSON `json:"adapter"`
		}
		body := h.getJSON(path, &got)
		def := map[string]string{"/health": "health", "/v1/config": "config"}[path]
		if err := v.Validate(schemas.ObservabilityID, def, body); err != nil {
			t.Errorf("%s does not match its schema: %v\n%s", path, err, body)
		}
		if d := cmp.Diff(want, got.Adapter); d != "" {
			t.Errorf("%s adapter (-want +got):\n%s", path, d)
		}
	}
	active := 0.0
	if name != baseAdapter {
		active = 1
	}
	if got := h.metricValue(t, telemetry.MetricAdapterActive, nil); got != active {
		t.Errorf("%s = %v with %s running, want %v", telemetry.MetricAdapterActive, got, name, active)
	}
	if got := h.metricValue(t, telemetry.MetricAdapterRevision, nil); got != float64(want.RevisionNumber) {
		t.Errorf("%s = %v with %s running, want %d", telemetry.MetricAdapterRevision, got, name, want.RevisionNumber)
	}
}
