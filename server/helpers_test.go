package server

import (
	"github.com/rs/zerolog"

	"fmt"

	"github.com/kiln-ai/kiln/engine"
)

func wrap(err error) error { return fmt.Errorf("submit: %w", err) }
func errQueueFull() error  { return engine.ErrQueueFull }
func errTooLong() error    { return engine.ErrTooLong }

func (s *Server) logger() *zerolog.Logger { return &s.log }
