package llama

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/kernels"
)

// TestInspectRefAdapter: InspectAdapter on the reference adapter's GGUF
// file gives golden.json's rank, alpha, targets, size and sha256, and its
// PEFT directory the same rank, alpha and targets.
func TestInspectRefAdapter(t *testing.T) {
	g := loadRefGolden(t)
	dir := refDir(t)
	want := AdapterInfo{Format: "gguf", Rank: g.Lora.Rank, Alpha: g.Lora.Alpha, Targets: g.Lora.Targets, Arch: "llama",
		Bytes: g.Lora.SizeBytes, SHA256: g.Lora.SHA256}
	got, err := InspectAdapter(filepath.Join(dir, g.Lora.File))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GGUF adapter (-golden +got):\n%s", diff)
	}
	peft, err := InspectAdapter(filepath.Join(dir, refPEFTDir(g.Lora.File)))
	if err != nil {
		t.Fatal(err)
	}
	want = AdapterInfo{Format: "peft", Rank: g.Lora.Rank, Alpha: g.Lora.Alpha, Targets: g.Lora.Targets, Bytes: peft.Bytes, SHA256: peft.SHA256}
	if diff := cmp.Diff(want, peft); diff != "" || peft.Bytes == 0 || len(peft.SHA256) != 64 {
		t.Errorf("PEFT adapter (-golden +got):\n%s", diff)
	}
}

// TestRefAdapterHFLayout: on a Hugging Face layout base (Q/K rows
// un-permuted, RopeNeoX) the PEFT adapter applies as is and the GGUF
// adapter with B_q un-permuted; both give the logits of the GGUF F32 base
// with the GGUF adapter (golden.json has no case for them). The F32 base is
// put in HF layout in memory, since the shipped tiny-llama.hf is BF16;
// tiny-llama.hf itself must give the same logits with either layout of the
// adapter.
func TestRefAdapterHFLayout(t *testing.T) {
	g := loadRefGolden(t)
	dir := refDir(t)
	var prompt []int
	for _, c := range g.Cases {
		if c.ID == "tiny-llama.F32+lora/p60" {
			prompt = c.PromptIDs
		}
	}
	if prompt == nil {
		t.Fatal("golden.json has no case tiny-llama.F32+lora/p60")
	}
	pool := kernels.NewPool(2)
	defer pool.Close()
	logitsWith := func(m *Model, adapter string) []float32 {
		a, err := LoadAdapter(filepath.Join(dir, adapter), m)
		if err != nil {
			t.Fatal(err)
		}
		logits, _ := runRef(m, a, pool, prompt, 0)
		return logits
	}
	ggufFile, peftDir := g.Lora.File, refPEFTDir(g.Lora.File)
	base := openRef(t, "tiny-llama.F32.gguf").Model
	want := logitsWith(base, ggufFile)
	hf := hfLayout(base)
	for _, ad := range []string{peftDir, ggufFile} {
		if d := maxDiff(logitsWith(hf, ad), want); d > 1e-4 {
			t.Errorf("HF-layout F32 base with %s: logits differ from the GGUF base with the GGUF adapter by %g", ad, d)
		}
	}
	bf16 := openRef(t, "tiny-llama.hf").Model
	if d := maxDiff(logitsWith(bf16, peftDir), logitsWith(bf16, ggufFile)); d > 1e-4 {
		t.Errorf("tiny-llama.hf: PEFT and GGUF adapters differ by %g", d)
	}
	// Mixing the layouts (B_q not converted) must be visibly wrong, or the
	// checks above could not tell the permutation from its absence.
	a, err := LoadAdapter(filepath.Join(dir, peftDir), base)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.layers {
		p := &a.layers[i][loraQ]
		p.b.F32 = permuteRows(p.b.F32, base.Config.Heads, p.b.Cols, -1)
	}
	wrong, _ := runRef(base, a, pool, prompt, 0)
	if d := maxDiff(wrong, want); d < 0.1 {
		t.Errorf("unconverted B_q moves the logits by only %g", d)
	}
}
