package llama_test

import (
	"fmt"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/kernels"
)

// Open the embedded default model and run a prompt through one slot: a
// prefill chunk whose last row asks for logits, then one decode step.
func ExampleOpen() {
	l, err := llama.Open(llama.TinyID)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = l.Close() }()
	pool := kernels.NewPool(0)
	defer pool.Close()
	s := l.Model.NewState(1, pool)
	defer s.Release(0)

	prompt := append([]int{l.Tokenizer.BOS()}, l.Tokenizer.Encode("once upon a time")...)
	rows := make([]llama.Row, len(prompt))
	for i, tok := range prompt {
		rows[i] = llama.Row{Slot: 0, Pos: i, Token: tok, Logits: i == len(prompt)-1}
	}
	logits := [][]float32{make([]float32, s.VocabSize())}
	s.Forward(rows, logits)
	next := 0
	for id, v := range logits[0] {
		if v > logits[0][next] {
			next = id
		}
	}
	s.Forward([]llama.Row{{Slot: 0, Pos: len(prompt), Token: next, Logits: true}}, logits)

	fmt.Println(l.ID, len(prompt), "prompt tokens", s.VocabSize() == l.Tokenizer.VocabSize())
	// Output: kiln-tiny 5 prompt tokens true
}
