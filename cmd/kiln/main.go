package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// subcommands maps a subcommand name to its entry point. Each lives in a
// file of its own name and parses its own flags from args.
var subcommands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"serve":    runServe,
	"generate": runGenerate,
	"bench":    runBench,
	"version":  runVersion,
	"health":   runHealth,
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	run, ok := subcommands[os.Args[1]]
	if !ok {
		usage(os.Stderr)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[2:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kiln:", err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: kiln serve|generate|bench|version|health [flags]")
}

func runVersion(_ context.Context, _ []string, stdout, _ io.Writer) error {
	_, err := fmt.Fprintln(stdout, "kiln", version)
	return err
}
