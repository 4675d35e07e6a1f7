package server

import (
	"fmt"

	"github.com/kiln-ai/kiln/engine"
)

func wrap(err error) error { return fmt.Errorf("submit: %w", err) }
func errQueueFull() error  { return engine.ErrQueueFull }
func errTooLong() error    { return engine.ErrTooLong }
