package main

import (
	"context"
	"errors"
	"io"
)

func runGenerate(_ context.Context, _ []string, _, _ io.Writer) error {
	return errors.New("generate: not implemented yet")
}
