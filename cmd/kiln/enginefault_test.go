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
	"strings"
	"testing"
	"time"
)

func TestExitCode(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"plain error", base, 1},
		{"engine failed", &exitError{code: exitEngineFailed, err: base}, exitEngineFailed},
		{"joined with shutdown errors", errors.Join(&exitError{code: exitEngineFailed, err: base}, errors.New("flush")), exitEngineFailed},
		{"wrapped", fmt.Errorf("serve: %w", &exitError{code: exitEngineFailed, err: base}), exitEngineFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitCode(tc.err); got != tc.want {
				t.Errorf("exitCode = %d, want %d", got, tc.want)
			}
		})
	}
}

// faultBinary builds kiln with the kiln_faultinject tag (faultinject.go)
// into a test directory.
func faultBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kiln-faultinject")
	if out, err := exec.Command("go", "build", "-tags", "kiln_faultinject", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags kiln_faultinject: %v\n%s", err, out)
	}
	return bin
}

// postChat posts a small chat with the given seed and returns the status
// and body (status 0 when the connection failed).
func postChat(t *testing.T, url string, seed int) (int, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"model": "kiln-tiny", "max_tokens": 4, "seed": seed, "temperature": 0.5,
		"messages": []map[string]any{{"role": "user", "content": "Tell me about the sun."}},
	})
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// TestKillSwitch is the acceptance check against the real binary:
// a request whose sampler panics fails alone and the next request
// succeeds; a forward-pass panic (the engine cannot continue) makes the
// process exit with exitEngineFailed within the drain bound, the stack
// trace logged, instead of living on with a dead engine.
func TestKillSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	const grace = 2 * time.Second
	addr := freeAddr(t)
	cmd := exec.Command(faultBinary(t), "serve", "--addr", addr, "--model", "kiln-tiny", "--shutdown-grace", grace.String(), "--threads", "2")
	cmd.Env = append(os.Environ(), "KILN_FAULT_INJECT=1")
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case err := <-done:
			if t.Failed() {
				t.Logf("kiln serve exit: %v", err)
			}
		case <-time.After(10 * time.Second):
		}
		if t.Failed() {
			t.Logf("kiln serve output:\n%s", logs.String())
		}
	})
	url := "http://" + addr
	waitHealthy(t, url, done)

	if status, body := postChat(t, url, 666); status != http.StatusInternalServerError || !bytes.Contains(body, []byte(`"error"`)) {
		t.Errorf("sampler fault: %d %s; want a 500 OpenAI error", status, body)
	}
	if status, body := postChat(t, url, 1); status != http.StatusOK {
		t.Fatalf("the request after a sampler fault: %d %s", status, body)
	}
	if resp, err := http.Get(url + "/health"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("health after a sampler fault: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	faulted := time.Now()
	// The fault may strike after the first token: then the response is a
	// 200 whose finish_reason is "error".
	if status, body := postChat(t, url, 667); status == http.StatusOK && !bytes.Contains(body, []byte(`"finish_reason":"error"`)) {
		t.Errorf("engine fault: %d %s; want a failure", status, body)
	}
	select {
	case err := <-done:
		done <- err // for the cleanup
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitEngineFailed {
			t.Errorf("exit: %v; want status %d", err, exitEngineFailed)
		}
		// The drain is bounded by the grace; telemetry flush and model
		// close add little.
		if d := time.Since(faulted); d > grace+20*time.Second {
			t.Errorf("exited %v after the fault; want within the drain bound", d)
		}
	case <-time.After(grace + 60*time.Second):
		t.Fatal("the process lives on after an engine fault")
	}
	out := logs.String()
	for _, want := range []string{"injected forward-pass fault", "goroutine ", "the engine failed and cannot continue"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// waitHealthy polls /health until 200, failing if the process exits.
func waitHealthy(t *testing.T, url string, done chan error) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("kiln serve exited before it was ready: %v", err)
		default:
		}
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("kiln serve not healthy after 2 minutes")
}
