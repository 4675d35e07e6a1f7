package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// kilnProc is a `kiln serve` child whose exit the test observes itself.
type kilnProc struct {
	cmd  *exec.Cmd
	URL  string
	log  *lockedBuffer
	done chan error // receives cmd.Wait's result once
}

// startKiln runs `kiln serve --addr <free> args...` and waits for /health;
// the process is killed when the test ends if it still runs.
func startKiln(t *testing.T, args ...string) *kilnProc {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(kilnBinary(t), append([]string{"serve", "--addr", addr}, args...)...)
	cmd.Env = os.Environ()
	p := &kilnProc{cmd: cmd, URL: "http://" + addr, log: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("kiln serve output:\n%s", p.log.String())
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(p.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("kiln serve not healthy after 2 minutes:\n%s", p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exitCode waits (at most within) for the process and returns its exit
// status; -1 when it did not exit in time.
func (p *kilnProc) exitCode(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(within):
		return -1
	}
}

// longStream starts a stream that outlasts any test's grace (a slow
// engine, many tokens) and returns its whole body once it ends.
func (p *kilnProc) longStream(t *testing.T) <-chan []byte {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"model": "kiln-tiny", "stream": true, "max_tokens": 1500,
		"messages": []map[string]any{{"role": "user", "content": "tell me a long story"}}})
	resp, err := http.Post(p.URL+"/v1/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: HTTP %d", resp.StatusCode)
	}
	out := make(chan []byte, 1)
	go func() {
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		out <- body
	}()
	return out
}

// TestServeDrainCut: against the built binary, SIGTERM starts a drain in
// which new requests get 503 with Retry-After (the listener stays open)
// and /health says draining; at the --shutdown-grace deadline the running
// stream ends with an error event and [DONE], and the exit status is
// non-zero because the drain did not complete.
func TestServeDrainCut(t *testing.T) {
	p := startKiln(t, "--shutdown-grace", "1500ms", "--cycle-idle", "30ms")
	stream := p.longStream(t)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(p.URL + "/health")
		if err != nil {
			t.Fatalf("/health during the drain: %v (the listener must stay open)", err)
		}
		var hb struct{ Status string }
		_ = json.NewDecoder(resp.Body).Decode(&hb)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable && hb.Status == "draining" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health never said draining (last %d %q)", resp.StatusCode, hb.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Post(p.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatalf("new request during the drain: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("new request during the drain: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	body := <-stream
	recs := strings.Split(strings.TrimSpace(string(body)), "\n\n")
	n := len(recs)
	if n < 2 || recs[n-1] != "data: [DONE]" || !strings.HasPrefix(recs[n-2], `data: {"error":`) {
		t.Errorf("cut stream ends %q, want an error event then [DONE]", recs[max(0, n-2):])
	}
	if code := p.exitCode(t, 15*time.Second); code <= 0 {
		t.Errorf("exit status %d after a cut drain, want non-zero", code)
	}
}

// TestServeSecondSignal: a second SIGTERM during the drain exits at once.
func TestServeSecondSignal(t *testing.T) {
	p := startKiln(t, "--shutdown-grace", "5m", "--cycle-idle", "30ms")
	stream := p.longStream(t)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil && !strings.Contains(p.log.String(), "shutting down") {
		time.Sleep(10 * time.Millisecond)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.exitCode(t, 5*time.Second); code != 2 {
		t.Errorf("exit status %d after a second signal, want 2 at once", code)
	}
	<-stream
}
