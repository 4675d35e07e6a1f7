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

// version is set at build time with -ldflags "-X main.version=..."; when
// it is not, kiln version reports the module version from the build info.
var version = "dev"

// command is one subcommand: its entry point, which lives in a file of its
// own name and parses its own flags from args, and its line in the help.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order the help shows them.
func commands() []command {
	return []command{
		{"serve", "run the OpenAI-compatible server with per-token latency telemetry", runServe},
		{"generate", "generate from a prompt offline through the engine (no server)", runGenerate},
		{"train", "fine-tune a LoRA adapter on JSONL conversations offline (the server's SFT trainer)", runTrain},
		{"bench", "drive a server with a seeded workload and write JSON evidence", runBench},
		{"version", "print the version, VCS revision and time, Go version and kernel path", runVersion},
		{"health", "probe a running server's /health (the container HEALTHCHECK)", runHealth},
		{"help", "list the commands, or show a command's flags (kiln help serve)", nil},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go exitOnSecondSignal(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses: 0 success (help included), 1 a failure while running
// (a drain that had to cut requests included), 2 a usage mistake (unknown
// command or flag, invalid flag value) or a second signal, 3 an engine
// failure (exitEngineFailed).
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// usageError marks an error as the user's mistake in the command line:
// kiln exits 2 for it, as flag parsing conventionally does.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// run dispatches args to a subcommand and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return exitOK
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			return run(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return exitOK
	case "-version", "--version":
		args = []string{"version"}
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == args[0] && c.run != nil {
			cmd = &c
		}
	}
	if cmd == nil {
		what := "command"
		if len(args[0]) > 0 && args[0][0] == '-' {
			what = "flag"
		}
		fmt.Fprintf(stderr, "kiln: unknown %s %q\n\n", what, args[0])
		usage(stderr)
		return exitUsage
	}
	err := cmd.run(ctx, args[1:], stdout, stderr)
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "kiln %s: %v\n", cmd.name, err)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "kiln:", err)
		return exitCode(err)
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
	fmt.Fprint(w, "Kiln: an OpenAI-compatible LLM server that explains every token's latency.\n\nUsage: kiln <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'kiln <command> -h' for a command's flags; 'kiln --version' is 'kiln version'.\n")
}
