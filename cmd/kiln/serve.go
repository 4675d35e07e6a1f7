package main

import (
	"context"
	"errors"
	"io"
)

func runServe(_ context.Context, _ []string, _, _ io.Writer) error {
	return errors.New("serve: not implemented yet")
}
