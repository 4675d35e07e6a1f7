package llama

import (
	"github.com/kiln-ai/kiln/internal/testshared"

	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// sharedModels returns ../shared/models or skips the test when the
// reference checkpoint is absent.
func sharedModels(tb testing.TB) string {
	tb.Helper()
	return filepath.Dir(testshared.Require(tb, "models", "stories260K.bin"))
}

// loadStories loads the stories260K reference checkpoint.
func loadStories(tb testing.TB) *Model {
	tb.Helper()
	m, err := LoadLlama2C(filepath.Join(sharedModels(tb), "stories260K.bin"))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

type goldenCase struct {
	Prompt    []int        `json:"prompt"`
	Top5      [][2]float64 `json:"top5_after_prompt"`
	Generated []int        `json:"generated"`
}

func loadGolden(tb testing.TB) []goldenCase {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(sharedModels(tb), "stories260K.golden.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var g struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		tb.Fatal(err)
	}
	if len(g.Cases) == 0 {
		tb.Fatal("golden file has no cases")
	}
	return g.Cases
}

// prefill feeds tokens to slot from position pos in chunks of at most chunk
// rows and returns the logits after the last token.
func prefill(s *State, slot, pos int, tokens []int, chunk int) []float32 {
	logits := make([]float32, s.VocabSize())
	for start := 0; start < len(tokens); start += chunk {
		end := min(start+chunk, len(tokens))
		rows := make([]Row, 0, end-start)
		for i := start; i < end; i++ {
			rows = append(rows, Row{Slot: slot, Pos: pos + i, Token: tokens[i], Logits: i == len(tokens)-1})
		}
		s.Forward(rows, [][]float32{logits})
	}
	return logits
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// topK returns the k largest logits as (id, value) pairs, largest first.
func topK(x []float32, k int) [][2]float64 {
	ids := make([]int, len(x))
	for i := range ids {
		ids[i] = i
	}
	sort.SliceStable(ids, func(a, b int) bool { return x[ids[a]] > x[ids[b]] })
	out := make([][2]float64, k)
	for i := range out {
		out[i] = [2]float64{float64(ids[i]), float64(x[ids[i]])}
	}
	return out
}

// maxDiff is the largest absolute difference between a and b.
func maxDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}
