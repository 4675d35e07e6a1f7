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
	go exitOnSecondSignal(ctx, stop)
	err := run(ctx, os.Args[2:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kiln:", err)
		os.Exit(exitCode(err))
	}
}

// exitOnSecondSignal: the first SIGINT or SIGTERM ends ctx (a graceful
// drain); a second one exits at once, with status 2.
func exitOnSecondSignal(ctx context.Context, stop context.CancelFunc) {
	<-ctx.Done()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	stop()
	s := <-sig
	fmt.Fprintf(os.Stderr, "kiln: second signal (%v): exiting at once\n", s)
	os.Exit(2)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: kiln serve|generate|bench|version [flags]")
}

func runVersion(_ context.Context, _ []string, stdout, _ io.Writer) error {
	_, err := fmt.Fprintln(stdout, "kiln", version)
	return err
}
