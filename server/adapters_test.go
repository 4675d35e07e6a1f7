package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/engine/llama"
)

// TestAdapterRegistryReloadsRewrittenFiles: the registry keeps one
// adapter per name while its weights file is unchanged (requests compare
// adapters by identity), and reads it again once the file was rewritten
// (a training job's output saved under the same name).
func TestAdapterRegistryReloadsRewrittenFiles(t *testing.T) {
	ref := refDir(t)
	dir := adapterDir(t, ref)
	model, err := llama.Open(filepath.Join(ref, "tiny-llama.F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = model.Close() }()
	g := newAdapterRegistry(dir, model.Model)
	for _, name := range []string{"peft", "lora"} {
		a, err := g.load("name", name)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := g.load("name", name); err != nil || b != a {
			t.Errorf("%s: a second load gave %p (%v), want the same adapter %p", name, b, err, a)
		}
		weights := a.path
		if name == "peft" {
			weights = filepath.Join(a.path, "adapter_model.safetensors")
		}
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(weights, later, later); err != nil {
			t.Fatal(err)
		}
		c, err := g.load("name", name)
		if err != nil {
			t.Fatal(err)
		}
		if c == a || c.w.Info.SHA256 != a.w.Info.SHA256 {
			t.Errorf("%s: after a rewrite load gave the cached adapter (%v) or other weights", name, c == a)
		}
	}
}
