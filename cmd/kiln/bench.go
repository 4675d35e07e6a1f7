package main

import (
	"context"
	"errors"
	"io"
)

func runBench(_ context.Context, _ []string, _, _ io.Writer) error {
	return errors.New("bench: not implemented yet")
}
