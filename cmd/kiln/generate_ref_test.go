package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refCase is one case of ../shared/models/ref/golden.json: a model file (or
// Hugging Face directory), a prompt, and the reference top logits and greedy
// continuation of llama.cpp (or of a float64 reference pass).
type refCase struct {
	ID           string       `json:"id"`
	File         string       `json:"file"`
	Format       string       `json:"format"`
	Lora         *string      `json:"lora"`
	PromptIDs    []int        `json:"prompt_ids"`
	Top8         [][2]float64 `json:"top8"`
	Greedy       []int        `json:"greedy"`
	GreedyMargin []float64    `json:"greedy_margin"`
}

func loadRefCases(t *testing.T) []refCase { return loadRefFile(t, "golden.json") }

// loadRefFile reads the cases of one golden file of ../shared/models/ref.
func loadRefFile(t *testing.T, name string) []refCase {
	t.Helper()
	raw, err := os.ReadFile(sharedModelPath(t, filepath.Join("ref", name)))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []refCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatalf("%s has no cases", name)
	}
	return g.Cases
}

// refTolerance is the README's advice for comparing our logits with the
// reference of a file: float references (F32 files, Hugging Face
// directories, the float64 passes) to 1e-4; F16 to 0.01; quantized files to
// 0.15, since llama.cpp also quantizes the activations.
func refTolerance(c refCase) float64 {
	switch {
	case c.Format == "hf", strings.Contains(c.File, ".F32."):
		return 1e-4
	case strings.Contains(c.File, ".F16."):
		return 0.01
	}
	return 0.15
}

// TestGenerateRefModels: `kiln generate --model FILE_OR_DIR --prompt-ids P
// --temperature 0 --json --top-logits K` reproduces every reference case of
// ../shared/models/ref: the reference top-8 logits within the file type's
// tolerance, and the greedy ids up to the first step whose reference margin
// is below twice that tolerance (README's rule: below it, either id is a
// correct answer). An adapter case runs twice, with --adapter naming the
// adapter's GGUF file and its PEFT directory.
func TestGenerateRefModels(t *testing.T) {
	runGenerateRef(t, loadRefCases(t))
}

// TestGenerateQwen35: the same for golden-qwen35.json, the tiny Qwen3.5 in
// its Hugging Face F32 and BF16 directories and its GGUF file.
func TestGenerateQwen35(t *testing.T) {
	runGenerateRef(t, loadRefFile(t, "golden-qwen35.json"))
}

func runGenerateRef(t *testing.T, cases []refCase) {
	for _, c := range cases {
		if raceEnabled && !strings.HasSuffix(c.ID, "/p9") {
			continue // under the race detector one prompt per model
		}
		for _, ad := range refCaseAdapters(c) {
			t.Run(c.ID+ad.suffix, func(t *testing.T) {
				model := sharedModelPath(t, filepath.Join("ref", c.File))
				ids := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c.PromptIDs)), ","), "[]")
				args := []string{"--model", model, "--prompt-ids", ids, "--max-tokens", fmt.Sprint(len(c.Greedy)),
					"--temperature", "0", "--top-logits", "16"}
				if ad.path != "" {
					args = append(args, "--adapter", sharedModelPath(t, filepath.Join("ref", ad.path)))
				}
				out := generateJSON(t, args...)
				if (ad.path != "") != (out.Adapter != "") {
					t.Errorf("--adapter %q: output's adapter is %q", ad.path, out.Adapter)
				}
				checkGenerateRef(t, c, out)
			})
		}
	}
}

// refCaseAdapters lists the --adapter values a case runs with: none for a
// base case; the GGUF file and its PEFT twin directory
// (tiny-llama.lora-r8.F32.gguf -> tiny-llama.lora-r8.peft) for a LoRA case.
func refCaseAdapters(c refCase) []struct{ suffix, path string } {
	if c.Lora == nil {
		return []struct{ suffix, path string }{{}}
	}
	return []struct{ suffix, path string }{{"/gguf", *c.Lora}, {"/peft", strings.TrimSuffix(*c.Lora, ".F32.gguf") + ".peft"}}
}

// checkGenerateRef compares one run's top logits and greedy ids with the
// case's reference.
func checkGenerateRef(t *testing.T, c refCase, out generateOutput) {
	t.Helper()
	tol := refTolerance(c)
	got := make(map[int]float64, len(out.TopLogits))
	for _, p := range out.TopLogits {
		got[int(p[0])] = p[1]
	}
	for _, w := range c.Top8 {
		g, ok := got[int(w[0])]
		if !ok || math.Abs(g-w[1]) > tol {
			t.Errorf("logit of id %d = %v (present %v), want %v ± %g", int(w[0]), g, ok, w[1], tol)
		}
	}
	for k, want := range c.Greedy {
		if c.GreedyMargin[k] < 2*tol {
			break
		}
		if k >= len(out.IDs) || out.IDs[k] != want {
			t.Fatalf("greedy ids %v, want %v up to step %d", out.IDs, c.Greedy, k)
		}
	}
}
