package llama

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/engine/internal/testshared"
)

// refOutputs is llama.cpp's result for one prompt: the 8 largest logits
// after the prompt, 16 greedy ids and the top1-top2 margin at each step.
type refOutputs struct {
	Top8   [][2]float64 `json:"top8"`
	Greedy []int        `json:"greedy"`
	Margin []float64    `json:"greedy_margin"`
}

// refCase is one case of ../shared/models/ref/golden.json.
type refCase struct {
	ID     string  `json:"id"`
	File   string  `json:"file"`
	LoRA   *string `json:"lora"`
	Format string  `json:"format"`
	Prompt []int   `json:"prompt_ids"`
	refOutputs
	Dequant *refOutputs `json:"dequant_f32"`
}

// refGoldenFamilies are the reference GGUF families this engine runs:
// tiny-llama (arch llama, plain RoPE). TODO(issue 9): add "tiny-llama3rope."
// and "tiny-qwen2." once their architectures are merged.
var refGoldenFamilies = []string{"tiny-llama."}

// TestRefGolden runs every reference GGUF of the supported families (every
// weight type) through the engine: the prompt in one batch, then 16 greedy
// steps. The engine multiplies the quantized weights in float32 without
// quantizing activations, so it must match llama.cpp's run of the
// dequantized-to-F32 twin (dequant_f32; for the F32 file, its own
// outputs) within 1e-4 on the top 8 logits and exactly
// on the greedy ids up to the first step whose margin is below 2e-4, and
// llama.cpp's quantized run within 0.15 (README tolerance section).
func TestRefGolden(t *testing.T) {
	dir := testshared.Require(t, "models", "ref")
	data, err := os.ReadFile(filepath.Join(dir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []refCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, c := range golden.Cases {
		if c.LoRA != nil || c.Format != "" || !hasAnyPrefix(c.File, refGoldenFamilies) {
			continue
		}
		ran++
		t.Run(c.ID, func(t *testing.T) {
			f, err := gguf.Open(filepath.Join(dir, c.File))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := f.Close(); err != nil {
					t.Error(err)
				}
			})
			m, err := FromGGUF(f, 0)
			if err != nil {
				t.Fatal(err)
			}
			logits, greedy := runGreedy(m, c.Prompt, len(c.Greedy))
			exact := c.refOutputs
			if c.Dequant != nil {
				exact = *c.Dequant
				checkRef(t, "llama.cpp quantized", logits, greedy, c.refOutputs, 0.15)
			}
			checkRef(t, "llama.cpp float32", logits, greedy, exact, 1e-4)
		})
	}
	if ran == 0 {
		t.Fatal("golden.json has no case of the supported families")
	}
}

// runGreedy evaluates prompt in one Forward call and returns the logits
// after it, then the n greedy ids (the first being the prompt's argmax).
func runGreedy(m *Model, prompt []int, n int) ([]float32, []int) {
	s := m.NewState(1, nil)
	logits := prefill(s, 0, 0, prompt, len(prompt))
	first := append([]float32(nil), logits...)
	ids := []int{argmax(logits)}
	for len(ids) < n {
		s.Forward([]Row{{Pos: len(prompt) + len(ids) - 1, Token: ids[len(ids)-1], Logits: true}}, [][]float32{logits})
		ids = append(ids, argmax(logits))
	}
	return first, ids
}

// checkRef compares the engine's logits after the prompt with want's top 8
// within tol, and its greedy ids with want's up to the first step whose
// margin is below 2*tol.
func checkRef(t *testing.T, what string, logits []float32, greedy []int, want refOutputs, tol float64) {
	t.Helper()
	var worst float64
	for _, p := range want.Top8 {
		worst = max(worst, math.Abs(float64(logits[int(p[0])])-p[1]))
	}
	if worst > tol {
		t.Errorf("%s: top-8 logits differ by up to %.3g (tolerance %g); engine top 8 %v, reference %v", what, worst, tol, topK(logits, 8), want.Top8)
	}
	for k, id := range want.Greedy {
		if want.Margin[k] < 2*tol {
			break
		}
		if greedy[k] != id {
			t.Errorf("%s: greedy ids %v, reference %v (first difference at step %d, margin %g)", what, greedy, want.Greedy, k, want.Margin[k])
			break
		}
	}
	t.Logf("%s: top-8 max abs diff %.3g", what, worst)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
