package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/kiln-ai/kiln/cmd/kiln/internal/bench"
)

// evidence is the JSON file a bench run leaves behind: enough to rerun it
// and to audit every number in its table.
type evidence struct {
	Command   []string           `json:"command"`
	Versions  map[string]string  `json:"versions"`
	StartedAt time.Time          `json:"started_at"`
	Workload  bench.Workload     `json:"workload"`
	BaseServe []string           `json:"base_serve_args,omitempty"`
	Arms      []*bench.ArmResult `json:"arms"`
	ArmErrors []armError         `json:"arm_errors,omitempty"`
}

type armError struct {
	Arm     string `json:"arm"`
	Error   string `json:"error"`
	LogTail string `json:"server_log_tail,omitempty"`
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// benchResultsDir holds the evidence files of runs without --out; it is
// gitignored, so evidence never lands in a commit by accident.
const benchResultsDir = "bench-results"

// runBench is `kiln bench`: read the flags, resolve the workload and the
// arms, run against --url or each arm's server, report.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseBenchFlags(args, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if err := o.resolve(); err != nil {
		return err
	}
	ev := evidence{
		Command:   append([]string{"kiln", "bench"}, args...),
		Versions:  map[string]string{"kiln": version, "go": runtime.Version()},
		StartedAt: time.Now().UTC(),
		Workload:  o.workload,
	}
	r := &benchRunner{o: o, http: &http.Client{Timeout: o.timeout}, stderr: stderr, terminal: isTerminal(stderr)}
	defer r.http.CloseIdleConnections()
	if o.url != "" {
		res, err := r.runArm(ctx, "run", o.url)
		if err != nil {
			return err
		}
		ev.Arms = append(ev.Arms, res)
	} else if err := r.runArms(ctx, &ev); err != nil {
		return err
	}
	return reportBench(stdout, ev, o.out)
}

// benchOptions are `kiln bench`'s flags.
type benchOptions struct {
	workload                  bench.Workload
	url, token, out, workfile string
	mix, serveBin, serveArgs  string
	timeout, cachePoll        time.Duration
	warmup                    int
	armFlags                  listFlag
	arms                      []bench.Arm // armFlags parsed, by resolve
	flags                     *flag.FlagSet
}

// parseBenchFlags reads `kiln bench`'s flags.
func parseBenchFlags(args []string, stdout io.Writer) (*benchOptions, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stdout) // help asked for; mistakes are one line on stderr (parseFlags)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, "usage: kiln bench (--url URL | --arm NAME:FLAG=VALUE ...) [--concurrency N] (--requests N | --duration D) [flags]")
		fmt.Fprintln(out, "\nDrives an OpenAI-compatible /v1/chat/completions endpoint with a seeded workload and")
		fmt.Fprintln(out, "writes a JSON evidence file; with --server-timing it keeps Kiln's own timing beside the client's.")
		fmt.Fprintln(out, "\nFlags:")
		fs.PrintDefaults()
	}
	o := &benchOptions{flags: fs}
	w := &o.workload
	fs.StringVar(&o.url, "url", "", "base URL of an OpenAI-compatible server (e.g. http://127.0.0.1:8420)")
	fs.StringVar(&o.token, "token", os.Getenv("KILN_ACCESS_TOKEN"), "bearer token for the server")
	fs.StringVar(&o.out, "out", "", "evidence JSON file (default "+benchResultsDir+"/kiln-bench-<time>.json)")
	fs.StringVar(&o.workfile, "workload", "", "workload JSON file (flags given explicitly override it)")
	fs.StringVar(&o.mix, "prompt-mix", "", "comma-separated synthetic prompt lengths, cycled per request (e.g. 8,400)")
	fs.StringVar(&o.serveBin, "serve-bin", "", "kiln binary for --arm runs (default: this executable)")
	fs.StringVar(&o.serveArgs, "serve-args", "", "base kiln serve arguments for --arm runs, space separated")
	fs.DurationVar(&o.timeout, "request-timeout", 5*time.Minute, "per-request timeout")
	fs.IntVar(&o.warmup, "warmup", 0, "short requests sent before the measured ones, left out of the figures (a user message no workload prompt shares)")
	fs.DurationVar(&o.cachePoll, "cache-poll", time.Second, "how often to read the server's prefix cache memory (/health, /metrics) during the run; 0: before and after only")
	fs.StringVar(&w.Model, "model", "kiln-tiny", "model id to request")
	fs.IntVar(&w.Concurrency, "concurrency", 1, "concurrent requests")
	fs.IntVar(&w.Requests, "requests", 0, "number of requests (or use --duration)")
	fs.DurationVar(&w.Duration, "duration", 0, "stop starting requests after this long")
	fs.IntVar(&w.MaxTokens, "max-tokens", 64, "max tokens per request")
	fs.IntVar(&w.PromptTokens, "prompt-tokens", 32, "synthetic prompt length in words (about tokens)")
	fs.StringVar(&w.PromptsFile, "prompts", "", "JSONL file of {\"messages\": [...]} prompts (instead of synthetic)")
	fs.IntVar(&w.SystemPromptTokens, "system-prompt-tokens", 0, "one shared system prompt of this many words before every synthetic prompt (the same text for all)")
	fs.IntVar(&w.Turns, "turns", 0, "make every request a conversation of this many turns, each resending the history with the server's replies; --requests then counts conversations")
	fs.BoolVar(&w.Stream, "stream", true, "stream responses (SSE)")
	fs.BoolVar(&w.ServerTiming, "server-timing", false, "ask a Kiln server for kiln.token_timing events and summaries (include_performance)")
	fs.Float64Var(&w.Temperature, "temperature", 0, "sampling temperature")
	fs.Uint64Var(&w.Seed, "seed", 1, "seed for prompts and per-request sampling seeds")
	fs.Var(&o.armFlags, "arm", "comparison arm NAME:FLAG=VALUE (repeatable): starts kiln serve once per arm with that one flag changed; NAME: alone runs the base arguments unchanged")
	return o, parseFlags(fs, args)
}

// resolve completes the workload (the --workload file under the flags
// given, --prompt-mix), checks it and the choice of target, and parses the
// arms.
func (o *benchOptions) resolve() error {
	if o.workfile != "" {
		if err := loadWorkload(o.workfile, o.flags, &o.workload); err != nil {
			return err
		}
	}
	if o.mix != "" {
		for _, f := range strings.Split(o.mix, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return fmt.Errorf("--prompt-mix: %w", err)
			}
			o.workload.PromptMix = append(o.workload.PromptMix, n)
		}
	}
	if err := o.workload.Validate(); err != nil {
		return usageError{err}
	}
	if (o.url == "") == (len(o.armFlags) == 0) {
		return usageError{errors.New("give exactly one of --url or --arm")}
	}
	for _, a := range o.armFlags {
		arm, err := bench.ParseArm(a)
		if err != nil {
			return err
		}
		o.arms = append(o.arms, arm)
	}
	if o.warmup < 0 {
		return usageError{errors.New("--warmup must not be negative")}
	}
	return nil
}

// benchRunner drives one bench run's arms against their servers.
type benchRunner struct {
	o        *benchOptions
	http     *http.Client
	stderr   io.Writer
	terminal bool
}

// runArm measures the server at base: warm-up, then the workload, watching
// its prefix cache.
func (r *benchRunner) runArm(ctx context.Context, name, base string) (*bench.ArmResult, error) {
	c := &bench.Client{BaseURL: base, Token: r.o.token, HTTP: r.http}
	w := &r.o.workload
	if r.o.warmup > 0 {
		if err := bench.Warmup(ctx, c, w, r.o.warmup); err != nil {
			return nil, err
		}
	}
	watch := bench.WatchPrefixCache(ctx, c, r.o.cachePoll)
	res, err := bench.Run(ctx, c, w, &bench.Bar{W: r.stderr, Terminal: r.terminal, Label: name})
	cache := watch.Stop(ctx)
	if res != nil {
		res.Name, res.Warmup, res.PrefixCache = name, r.o.warmup, &cache
	}
	return res, err
}

// runArms starts kiln serve once per arm and measures it, recording in ev
// each arm's result or error; it fails only when no arm ran.
func (r *benchRunner) runArms(ctx context.Context, ev *evidence) error {
	bin := r.o.serveBin
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this executable: %w", err)
		}
		bin = exe
	}
	base := append([]string{"serve"}, strings.Fields(r.o.serveArgs)...)
	ev.BaseServe = base
	for _, arm := range r.o.arms {
		srv, err := bench.StartServer(ctx, bin, arm.ServeArgs(base), 2*time.Minute)
		if err != nil {
			ev.ArmErrors = append(ev.ArmErrors, armError{Arm: arm.Name, Error: err.Error()})
			fmt.Fprintf(r.stderr, "arm %s: %v\n", arm.Name, err)
			continue
		}
		res, err := r.runArm(ctx, arm.Name, srv.URL)
		stopErr := srv.Stop(ctx)
		if err != nil {
			ev.ArmErrors = append(ev.ArmErrors, armError{Arm: arm.Name, Error: err.Error(), LogTail: srv.LogTail()})
			continue
		}
		if arm.Flag != "" {
			res.Flag = "--" + arm.Flag + "=" + arm.Value
		}
		if stopErr != nil {
			ev.ArmErrors = append(ev.ArmErrors, armError{Arm: arm.Name, Error: stopErr.Error(), LogTail: srv.LogTail()})
		}
		ev.Arms = append(ev.Arms, res)
	}
	if len(ev.Arms) == 0 {
		return errors.New("no arm could run; see the errors above")
	}
	return nil
}

// reportBench writes the tables to stdout and the evidence file to out;
// it fails when every arm failed.
func reportBench(stdout io.Writer, ev evidence, out string) error {
	if err := bench.WriteTable(stdout, ev.Arms); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	if err := bench.WriteTurns(stdout, ev.Arms); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	if err := writeEvidence(ev, out, stdout); err != nil {
		return err
	}
	return allFailed(ev.Arms)
}

// allFailed is an error naming the first failure when an arm had requests
// and every one of them failed (nothing listening at the URL, a wrong
// model name): a table of zeros is not a measurement.
func allFailed(arms []*bench.ArmResult) error {
	for _, a := range arms {
		if a.Stats.Requests == 0 || a.Stats.Failed < a.Stats.Requests {
			continue
		}
		first := ""
		for _, s := range a.Samples {
			if s.Error != "" {
				first = s.Error
				break
			}
		}
		return fmt.Errorf("arm %s: all %d requests failed; the first: %s", a.Name, a.Stats.Requests, first)
	}
	return nil
}

// writeEvidence writes the evidence JSON to out, or without it under
// benchResultsDir, and names the file on stdout.
func writeEvidence(ev evidence, out string, stdout io.Writer) error {
	path := out
	if path == "" {
		path = filepath.Join(benchResultsDir, "kiln-bench-"+ev.StartedAt.Format("20060102T150405Z")+".json")
		if err := os.MkdirAll(benchResultsDir, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", benchResultsDir, err)
		}
	}
	b, err := json.MarshalIndent(ev, "", " ")
	if err != nil {
		return fmt.Errorf("encoding evidence: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing evidence: %w", err)
	}
	fmt.Fprintf(stdout, "evidence: %s\n", path)
	return nil
}

// loadWorkload reads a workload JSON file into w, keeping the values of
// flags that were set explicitly on the command line.
func loadWorkload(path string, fs *flag.FlagSet, w *bench.Workload) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	explicit := *w
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(w); err != nil {
		return fmt.Errorf("workload %s: %w", path, err)
	}
	keep := map[string]func(){
		"model":         func() { w.Model = explicit.Model },
		"concurrency":   func() { w.Concurrency = explicit.Concurrency },
		"requests":      func() { w.Requests = explicit.Requests },
		"duration":      func() { w.Duration = explicit.Duration },
		"max-tokens":    func() { w.MaxTokens = explicit.MaxTokens },
		"prompt-tokens": func() { w.PromptTokens = explicit.PromptTokens },
		"prompts":       func() { w.PromptsFile = explicit.PromptsFile },
		"stream":        func() { w.Stream = explicit.Stream },
		"server-timing": func() { w.ServerTiming = explicit.ServerTiming },
		"temperature":   func() { w.Temperature = explicit.Temperature },
		"seed":          func() { w.Seed = explicit.Seed },

		"system-prompt-tokens": func() { w.SystemPromptTokens = explicit.SystemPromptTokens },
		"turns":                func() { w.Turns = explicit.Turns },
	}
	for name, restore := range keep {
		if set[name] {
			restore()
		}
	}
	return nil
}
