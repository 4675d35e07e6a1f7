package testshared

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// RefGolden is the part of ../shared/models/ref/golden.json the tests read:
// llama.cpp's (and the float64 reference's) outputs for the reference
// models, and the tokenizer cases.
type RefGolden struct {
	Cases     []RefCase     `json:"cases"`
	Tokenizer []RefTokGroup `json:"tokenizer"`
	Lora      RefLora       `json:"lora"`
}

// RefLora describes the reference LoRA adapter (golden.json "lora"): its
// GGUF file (the PEFT twin is the same name with .peft for .F32.gguf),
// rank, alpha, targeted GGUF tensor kinds, and the GGUF file's size and
// sha256.
type RefLora struct {
	File      string   `json:"file"`
	Rank      int      `json:"rank"`
	Alpha     float64  `json:"alpha"`
	Targets   []string `json:"targets"`
	SizeBytes int64    `json:"size_bytes"`
	SHA256    string   `json:"sha256"`
}

// RefOutputs are the outputs of one prompt on one model.
type RefOutputs struct {
	Top8         [][2]float64 `json:"top8"`
	Greedy       []int        `json:"greedy"`
	GreedyMargin []float64    `json:"greedy_margin"`
}

// RefCase is one model file (or HF directory), optional adapter and prompt.
type RefCase struct {
	ID        string  `json:"id"`
	File      string  `json:"file"` // a GGUF file or an HF directory, relative to models/ref
	Format    string  `json:"format"`
	Lora      *string `json:"lora"`
	PromptIDs []int   `json:"prompt_ids"`
	RefOutputs
	DequantF32 *RefOutputs `json:"dequant_f32"` // quantized files: the same case on the dequantized twin
}

// RefTokGroup is one tokenizer[] group: every GGUF file and HF directory it
// lists gives the same ids on its cases (llama.cpp's
// llama_tokenize(add_special=false, parse_special=true)), and decodes them
// to Detok (llama_detokenize(remove_special=false, unparse_special=true);
// for llama-bpe that includes clean_spaces).
type RefTokGroup struct {
	Pre    string   `json:"pre"`
	Files  []string `json:"files"`
	HFDirs []string `json:"hf_dirs"`
	Cases  []struct {
		Text  string `json:"text"`
		IDs   []int  `json:"ids"`
		Detok string `json:"detok"`
	} `json:"cases"`
}

// LoadRefGolden reads ../shared/models/ref/golden.json, or skips tb when
// the reference data is absent; it returns the folder it is in too.
func LoadRefGolden(tb testing.TB) (dir string, g *RefGolden) {
	tb.Helper()
	g = new(RefGolden)
	dir = readRef(tb, "golden.json", g)
	if len(g.Cases) == 0 || len(g.Tokenizer) == 0 {
		tb.Fatalf("golden.json has %d cases and %d tokenizer groups", len(g.Cases), len(g.Tokenizer))
	}
	return dir, g
}

// Qwen35Golden is ../shared/models/ref/golden-qwen35.json: the float64
// reference outputs of the tiny Qwen3.5 model in its three layouts
// (README-qwen35.md).
type Qwen35Golden struct {
	Cases []RefCase `json:"cases"`
	// ChatPrompts are the chat conversations of the cases c1 and c2, with
	// the text the tokenizer's chat template renders for them.
	ChatPrompts map[string]struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Text string `json:"text"`
	} `json:"chat_prompts"`
}

// LoadQwen35Golden reads golden-qwen35.json, or skips tb when the
// reference data is absent; it returns the folder it is in too.
func LoadQwen35Golden(tb testing.TB) (dir string, g *Qwen35Golden) {
	tb.Helper()
	g = new(Qwen35Golden)
	dir = readRef(tb, "golden-qwen35.json", g)
	if len(g.Cases) == 0 {
		tb.Fatal("golden-qwen35.json has no cases")
	}
	return dir, g
}

// readRef decodes the JSON file name of ../shared/models/ref into v, or
// skips tb when the reference data is absent; it returns the folder.
func readRef(tb testing.TB, name string, v any) string {
	tb.Helper()
	dir := filepath.Dir(Require(tb, "models", "ref", name))
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return dir
}
