package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runKiln runs the built binary with args and returns its exit status,
// stdout and stderr.
func runKiln(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(kilnBinary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("kiln %v: %v", args, err)
	return 0, "", ""
}

// TestCLIHelpAndErrors: the command explains itself; help exits 0, usage
// mistakes exit 2 and say what was wrong.
func TestCLIHelpAndErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"help"}, {"--help"}, {"-h"}} {
		t.Run(fmt.Sprint(args), func(t *testing.T) {
			code, stdout, _ := runKiln(t, args...)
			if code != 0 {
				t.Errorf("exit %d, want 0", code)
			}
			for _, c := range commands() {
				if !regexp.MustCompile(`(?m)^  ` + c.name + ` +\S.+$`).MatchString(stdout) {
					t.Errorf("help does not list %q with its line:\n%s", c.name, stdout)
				}
			}
		})
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"unknown top-level flag", []string{"--bogus"}, 2, `unknown flag "--bogus"`},
		{"unknown serve flag", []string{"serve", "--no-such-flag"}, 2, "flag provided but not defined: -no-such-flag"},
		{"prefill chunk zero", []string{"serve", "--prefill-chunk", "0"}, 2, "invalid value 0 for --prefill-chunk: must be at least 1"},
		{"negative kv budget", []string{"serve", "--kv-budget", "-1"}, 2, "invalid value -1 for --kv-budget: must be at least 0"},
		{"negative body size", []string{"serve", "--max-body-bytes", "-5"}, 2, "invalid value -5 for --max-body-bytes: must be at least 1"},
		{"ring too large", []string{"serve", "--recent-requests", "100001"}, 2, "must be in 0..100000"},
		{"flag value of the wrong type", []string{"serve", "--threads", "many"}, 2, `invalid value "many" for flag -threads`},
		{"generate without a prompt", []string{"generate"}, 2, "give exactly one of --prompt and --prompt-ids"},
		{"bench without a target", []string{"bench", "--requests", "1"}, 2, "give exactly one of --url or --arm"},
		{"unknown flag suggests", []string{"serve", "--prefil-chunk", "8"}, 2, "did you mean --prefill-chunk? (kiln serve --help lists every flag)"},
		{"duration without a unit", []string{"serve", "--shutdown-grace", "30"}, 2, "use a Go duration such as 30s"},
		{"log level", []string{"serve", "--log-level", "verbose"}, 2, `invalid value "verbose" for --log-level: use debug, info, warn or error`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runKiln(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr does not say %q:\n%s", tc.wantStderr, stderr)
			}
			if tc.wantCode == 2 && strings.Contains(stderr, "Flags:") {
				t.Errorf("a mistake printed the whole usage:\n%s", stderr)
			}
		})
	}
	// Help asked for goes to stdout, so that kiln serve --help | grep works.
	for _, args := range [][]string{{"help", "serve"}, {"serve", "--help"}} {
		code, stdout, stderr := runKiln(t, args...)
		if code != 0 || !strings.Contains(stdout, "-served-model-name string") || stderr != "" {
			t.Errorf("kiln %v: exit %d, stdout lacks the flags or stderr %q:\n%s", args, code, stderr, stdout)
		}
	}
}

// TestCLIVersion: both spellings print the version, the VCS revision and
// time, the Go version and the kernel path.
func TestCLIVersion(t *testing.T) {
	var outs []string
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, stderr := runKiln(t, args...)
		if code != 0 {
			t.Fatalf("kiln %v: exit %d: %s", args, code, stderr)
		}
		for _, re := range []string{`(?m)^kiln \S+$`, `(?m)^revision: ([0-9a-f]{40}(\+dirty)?|unknown \(not stamped: .*go build -buildvcs=true \./cmd/kiln records it\))$`, `(?m)^time: \S+$`, `(?m)^go: go1\.\d+\S* \w+/\w+$`, `(?m)^kernels: \S.*$`} {
			if !regexp.MustCompile(re).MatchString(stdout) {
				t.Errorf("kiln %v output does not match %s:\n%s", args, re, stdout)
			}
		}
		outs = append(outs, stdout)
	}
	if outs[0] != outs[1] {
		t.Errorf("kiln version and kiln --version differ:\n%s\n%s", outs[0], outs[1])
	}
	if code, _, _ := runKiln(t, "version", "extra"); code != 2 {
		t.Errorf("kiln version extra: exit %d, want 2", code)
	}
}

// TestServedModelNameAndLimits: --served-model-name is what /v1/models
// lists and requests name; a prompt over the context gets a 400 that
// states both lengths; /v1/config shows resolved values; GET / opens the
// dashboard.
func TestServedModelNameAndLimits(t *testing.T) {
	p := startServe(t, "--served-model-name", "house-model", "--slots", "2", "--threads", "1")
	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get(p.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	var models struct{ Data []struct{ ID string } }
	get("/v1/models", &models)
	if len(models.Data) != 1 || models.Data[0].ID != "house-model" {
		t.Errorf("/v1/models %+v, want house-model", models.Data)
	}
	body := p.chat(t.Context(), t, map[string]any{"model": "house-model", "max_tokens": 2,
		"messages": []map[string]any{{"role": "user", "content": "hi"}}})
	if !bytes.Contains(body, []byte(`"model":"house-model"`)) {
		t.Errorf("response does not name the served model: %s", body)
	}

	status, raw := post(t, p.URL+"/v1/chat/completions", map[string]any{"model": "house-model",
		"messages": []map[string]any{{"role": "user", "content": strings.Repeat("sun moon star ", 3000)}}})
	if status != http.StatusBadRequest {
		t.Fatalf("long prompt: %d %s", status, raw)
	}
	var e struct {
		Error struct{ Message, Code string }
	}
	_ = json.Unmarshal(raw, &e)
	m := regexp.MustCompile(`maximum context length is (\d+) tokens, but the prompt is (\d+) tokens`).FindStringSubmatch(e.Error.Message)
	if e.Error.Code != "context_length_exceeded" || m == nil || m[1] == m[2] {
		t.Errorf("context error %+v: want both lengths stated", e.Error)
	}

	var cfg struct {
		Threads int `json:"threads"`
		Engine  struct {
			MaxBatch int `json:"max_batch"`
			KVBudget int `json:"kv_budget"`
		} `json:"engine"`
	}
	get("/v1/config", &cfg)
	if cfg.Threads != 1 || cfg.Engine.MaxBatch != 2 || cfg.Engine.KVBudget == 0 {
		t.Errorf("/v1/config threads %d max_batch %d kv_budget %d: want 1, 2 (the slots) and the resolved budget",
			cfg.Threads, cfg.Engine.MaxBatch, cfg.Engine.KVBudget)
	}

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(p.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui" {
		t.Errorf("GET / = %d to %q, want 302 to /ui", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func post(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// TestBenchEvidenceDir: without --out, kiln bench writes its evidence
// under bench-results/ of the working directory (gitignored); --out
// writes exactly there.
func TestBenchEvidenceDir(t *testing.T) {
	dir := t.TempDir()
	closed := "http://" + freeAddr(t) // every request fails fast; the evidence is still written
	bench := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(kilnBinary(t), append([]string{"bench", "--url", closed, "--requests", "1", "--max-tokens", "1"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "all 1 requests failed") {
			t.Fatalf("kiln bench against nothing: %v, want exit 1 naming the failure (the evidence still written)\n%s", err, out)
		}
		m := regexp.MustCompile(`(?m)^evidence: (.+)$`).FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("no evidence line:\n%s", out)
		}
		return m[1]
	}
	got := bench()
	if filepath.Dir(got) != "bench-results" {
		t.Errorf("evidence at %q, want under bench-results/", got)
	}
	if _, err := os.Stat(filepath.Join(dir, got)); err != nil {
		t.Error(err)
	}
	want := filepath.Join(dir, "mine.json")
	if got := bench("--out", want); got != want {
		t.Errorf("--out %q wrote %q", want, got)
	}
	if _, err := os.Stat(want); err != nil {
		t.Error(err)
	}
	if b, err := os.ReadFile(filepath.Join(repoRoot(t), ".gitignore")); err != nil || !strings.Contains(string(b), "/bench-results/") {
		t.Errorf(".gitignore does not ignore /bench-results/ (%v)", err)
	}
}
