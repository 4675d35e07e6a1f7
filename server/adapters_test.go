package server

import (
	"os"
	"path/filepath"
	"slices"
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
	g := newAdapterRegistry(dir, model.Model, DefaultAdapterCacheBytes)
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

// TestAdapterCacheBound: past --adapter-cache-bytes the registry forgets
// the least recently loaded adapter, never the server default nor the one
// just loaded, and keeps its byte count equal to what it holds.
func TestAdapterCacheBound(t *testing.T) {
	ref := refDir(t)
	dir := adapterDir(t, ref)
	copyFile(t, filepath.Join(dir, "lora.gguf"), filepath.Join(dir, "lora2.gguf"))
	model, err := llama.Open(filepath.Join(ref, "tiny-llama.F32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = model.Close() }()
	one, err := newAdapterRegistry(dir, model.Model, DefaultAdapterCacheBytes).load("name", "lora")
	if err != nil {
		t.Fatal(err)
	}
	size := one.bytes
	if size <= 0 || size != one.w.MemBytes() {
		t.Fatalf("adapter bytes %d (MemBytes %d), want positive and equal", size, one.w.MemBytes())
	}

	check := func(g *adapterRegistry, step string, want ...string) {
		t.Helper()
		if got := g.loadedNames(); !slices.Equal(got, want) {
			t.Errorf("%s: loaded %v, want %v", step, got, want)
		}
		var sum int64
		for _, a := range g.loaded {
			sum += a.bytes
		}
		if g.bytes != sum {
			t.Errorf("%s: the registry counts %d bytes, holds %d", step, g.bytes, sum)
		}
	}
	load := func(g *adapterRegistry, name string) *adapter {
		t.Helper()
		a, err := g.load("name", name)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	g := newAdapterRegistry(dir, model.Model, 2*size)
	lora := load(g, "lora")
	peft := load(g, "peft")
	check(g, "two that fit", "lora", "peft")
	if load(g, "lora") != lora {
		t.Error("a cached adapter was read again")
	}
	load(g, "lora2")
	check(g, "a third: the least recently loaded (peft) goes", "lora", "lora2")
	g.setDefault(lora)
	load(g, "lora2")
	again := load(g, "peft")
	check(g, "the default stays, lora2 goes", "lora", "peft")
	if again == peft || again.w.Info.SHA256 != peft.w.Info.SHA256 {
		t.Errorf("a forgotten adapter came back as the old value (%v) or other weights", again == peft)
	}
	zero := newAdapterRegistry(dir, model.Model, 0)
	load(zero, "lora")
	check(zero, "bound 0 keeps the latest", "lora")
	zero.setDefault(load(zero, "peft"))
	check(zero, "bound 0, then the default", "peft")
	load(zero, "lora2")
	check(zero, "bound 0 keeps the default and the latest", "lora2", "peft")

	if err := g.remove("name", "peft"); err != nil {
		t.Fatal(err)
	}
	check(g, "after a delete", "lora")
}
