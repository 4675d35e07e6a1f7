package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/engine/safetensors"
)

// writeBadPEFT writes a PEFT directory for kiln-tiny (dim 288) whose
// q_proj lora_A of layer 0 reads 64 values instead of 288, and returns the
// directory and that tensor's name.
func writeBadPEFT(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := `{"peft_type":"LORA","r":2,"lora_alpha":4,"target_modules":["q_proj"],"bias":"none"}`
	if err := os.WriteFile(filepath.Join(dir, "adapter_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"
	entries := []safetensors.Entry{
		{Name: bad, DType: "F32", Shape: []uint64{2, 64}},
		{Name: "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight", DType: "F32", Shape: []uint64{288, 2}},
	}
	data := [][]byte{make([]byte, 2*64*4), make([]byte, 288*2*4)}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, entries, data, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "adapter_model.safetensors"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, bad
}

// TestGenerateAdapterErrors: a bad --adapter is an error (kiln exits
// non-zero) whose message names the flag, the file and the tensor or key.
func TestGenerateAdapterErrors(t *testing.T) {
	badDir, badTensor := writeBadPEFT(t)
	notAdapter := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(notAdapter, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		adapter string
		want    []string
	}{
		{"shape that does not fit", badDir, []string{"--adapter", "adapter layout invalid", "adapter_model.safetensors", badTensor, "2x64, want 2x288"}},
		{"directory without adapter_config.json", notAdapter, []string{"--adapter", "adapter_config.json missing"}},
		{"missing path", filepath.Join(notAdapter, "nope"), []string{"--adapter", "no such file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runGenerate(context.Background(), []string{"--prompt-ids", "1", "--max-tokens", "1", "--adapter", tc.adapter}, &stdout, &stderr)
			if err == nil {
				t.Fatal("generate with a bad adapter succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestGenerateAdapterRefModelFile: a model GGUF given as --adapter is
// refused as not an adapter, and the reference adapter on a model of
// another shape names the first tensor that does not fit.
func TestGenerateAdapterRefModelFile(t *testing.T) {
	model := sharedModelPath(t, filepath.Join("ref", "tiny-llama.F32.gguf"))
	adapter := sharedModelPath(t, filepath.Join("ref", "tiny-llama.lora-r8.F32.gguf"))
	for _, tc := range []struct {
		name        string
		model, with string
		want        []string
	}{
		{"model as adapter", model, model, []string{"tiny-llama.F32.gguf", "general.type", "want \"adapter\""}},
		{"adapter of another shape", "kiln-tiny", adapter, []string{"tiny-llama.lora-r8.F32.gguf", "blk.0.attn_q.weight.lora_a", "want 8x288"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runGenerate(context.Background(), []string{"--model", tc.model, "--prompt-ids", "1", "--max-tokens", "1", "--adapter", tc.with}, &stdout, &stderr)
			if err == nil {
				t.Fatal("generate succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
