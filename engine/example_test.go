package engine_test

import (
	"context"
	"fmt"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/enginetest"
)

// Submit a request and read its tokens as the actor delivers them; the
// stream's Result says how it ended.
func Example() {
	backend := enginetest.NewBackend(4, 64, 64) // or (*llama.Model).NewState(slots, pool)
	e, err := engine.New(backend, engine.Config{PrefillChunk: 32})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := e.Start(ctx); err != nil {
		panic(err)
	}
	defer func() { _ = e.Shutdown(ctx) }()

	s, err := e.Submit(ctx, engine.Request{Prompt: []int{1, 2, 3}, MaxTokens: 5})
	if err != nil {
		panic(err) // ErrQueueFull: 429; ErrStopped: 503; ErrTooLong, ErrInvalidRequest: 400
	}
	for tok := range s.Tokens() {
		fmt.Print(tok.ID, " ")
	}
	res := s.Result()
	fmt.Println("|", res.Finish, res.Generated)
	fmt.Println(enginetest.Greedy([]int{1, 2, 3}, 5, 64))
	// Output:
	// 36 44 63 1 22 | length 5
	// [36 44 63 1 22]
}
