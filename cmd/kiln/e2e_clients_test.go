package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleClientsExplainFailures: the example clients take --url,
// --model and --token, and a refused connection or a missing token ends
// them with exit 1 and one line naming the cause, not a stack trace; so
// does a request the server refuses (a wrong model), instead of an empty
// table.
func TestExampleClientsExplainFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	dir := filepath.Join(repoRoot(t), "examples", "clients")
	srv := startServe(t, "--access-token", "e2e-secret")
	closed := "http://" + freeAddr(t)
	type client struct {
		name string
		cmd  func(args ...string) *exec.Cmd
	}
	var clients []client
	if _, err := exec.LookPath("jq"); err == nil || os.Getenv("CI") != "" {
		clients = append(clients, client{"stream-timing.sh", func(args ...string) *exec.Cmd {
			return exec.Command(filepath.Join(dir, "stream-timing.sh"), args...)
		}})
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err == nil || os.Getenv("CI") != "" {
		node := requireTool(t, "node")
		clients = append(clients, client{"stream-timing.mjs", func(args ...string) *exec.Cmd {
			c := exec.Command(node, append([]string{"stream-timing.mjs"}, args...)...)
			c.Dir = dir
			return c
		}})
	}
	if len(clients) == 0 {
		t.Skip("neither jq nor the openai npm package is installed: run scripts/install-e2e")
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"connection refused", []string{"--url", closed, "hi"}, 1, "cannot reach " + closed},
		{"no token", []string{"--url", srv.URL, "--model", "kiln-tiny", "hi"}, 1, "401"},
		{"token given", []string{"--url", srv.URL, "--model", "kiln-tiny", "--token", "e2e-secret", "--max-tokens", "3", "hi"}, 0, ""},
		{"wrong model", []string{"--url", srv.URL, "--model", "kiln-tinyy", "--token", "e2e-secret", "hi"}, 1, `"kiln-tinyy" does not exist`},
		{"bad max tokens", []string{"--url", srv.URL, "--token", "e2e-secret", "--max-tokens", "-3", "hi"}, 1, "max_tokens"},
	}
	for _, c := range clients {
		for _, tc := range tests {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				cmd := c.cmd(tc.args...)
				cmd.Env = append(os.Environ(), "KILN_ACCESS_TOKEN=", "KILN_BASE_URL=")
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != tc.wantCode {
					t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, stdout.String(), stderr.String())
				}
				if tc.want == "" {
					if !strings.Contains(stdout.String(), "TTFT") {
						t.Errorf("no timing summary:\n%s", stdout.String())
					}
					if noisy := floatNoise.FindString(stdout.String()); noisy != "" {
						t.Errorf("a number printed with float noise (%s) for people:\n%s", noisy, stdout.String())
					}
					return
				}
				lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
				if len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
					t.Errorf("stderr %q: want one line containing %q", stderr.String(), tc.want)
				}
			})
		}
	}
}
