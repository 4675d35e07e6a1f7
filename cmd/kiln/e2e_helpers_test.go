package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests build the real kiln binary once and run it as a
// child process, exactly as a user would, then talk to it with real
// clients (the openai npm package, Prometheus, Chromium).

var (
	binOnce sync.Once
	binPath string
	binDir  string
	binErr  error
)

func kilnBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "kiln-e2e-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "kiln")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func cleanupBinary() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// repoRoot is the module root (where go.mod is).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// lockedBuffer collects a child's output for the failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveProcess is a running `kiln serve`.
type serveProcess struct {
	URL  string
	log  *lockedBuffer
	stop func() // SIGTERM and wait (kill after 30 s); idempotent
}

// startServe runs `kiln serve --addr <free> args...`, waits for /health and
// stops it (SIGTERM, then kill) when the test ends.
func startServe(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	return startServeEnv(t, nil, args...)
}

// startServeEnv is startServe with extra environment variables (KEY=VALUE)
// for the child.
func startServeEnv(t *testing.T, env []string, args ...string) *serveProcess {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(kilnBinary(t), append([]string{"serve", "--addr", addr}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("kiln serve exited with %v after SIGTERM", err)
				}
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Logf("killed after 30s: %v", <-done)
				t.Errorf("kiln serve did not stop within 30s of SIGTERM")
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("kiln serve output:\n%s", logs.String())
		}
	})
	p := &serveProcess{URL: "http://" + addr, log: logs, stop: stop}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("kiln serve exited before it was ready: %v\n%s", err, logs.String())
		default:
		}
		resp, err := http.Get(p.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("kiln serve not healthy after 2 minutes:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chat posts a chat completion and returns the raw body.
func (p *serveProcess) chat(ctx context.Context, t *testing.T, body map[string]any) []byte {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+"/v1/chat/completions", bytes.NewReader(b))
	if err != nil {
		t.Error(err)
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("chat: HTTP %d: %s", resp.StatusCode, out)
	}
	return out
}

// stallPromptWords is the long prompt of the deliberate stalls: kiln-tiny's
// words are one token each, so with the chat template this nearly fills
// its 2048-token context, and prefilling it in one chunk takes several
// times the 250 ms stall threshold even on a fast, quiet machine.
const stallPromptWords = 1900

// longPrompt is a prompt of about n words.
func longPrompt(n int) string {
	w := strings.Fields("the quick brown fox jumps over a lazy dog while seven wise owls watch")
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w[i%len(w)])
	}
	return b.String()
}

// stallWorkload makes a deliberate actor_prefill stall: a request decodes
// while a long prompt is admitted and prefilled in one large chunk (the
// server is started with a large --prefill-chunk). The long prompt is sent
// once the first request has streamed its first token. It waits for both.
func (p *serveProcess) stallWorkload(t *testing.T, longWords int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, _ := json.Marshal(map[string]any{
		"model": "kiln-tiny", "stream": true, "max_tokens": 120, "temperature": 0,
		"messages": []map[string]any{{"role": "user", "content": "hello there"}},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+"/v1/chat/completions", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("decoding request: HTTP %d", resp.StatusCode)
	}
	firstToken := make(chan struct{})
	streamDone := make(chan struct{})
	go func() {
		defer close(streamDone)
		buf := make([]byte, 4096)
		signalled := false
		for {
			n, err := resp.Body.Read(buf)
			if !signalled && bytes.Contains(buf[:n], []byte(`"content"`)) {
				close(firstToken)
				signalled = true
			}
			if err != nil {
				if !signalled {
					close(firstToken)
				}
				return
			}
		}
	}()
	<-firstToken
	p.chat(ctx, t, map[string]any{
		"model": "kiln-tiny", "stream": false, "max_tokens": 2, "temperature": 0,
		"messages": []map[string]any{{"role": "user", "content": longPrompt(longWords)}},
	})
	<-streamDone
}

// requireTool finds an external tool for an end-to-end test. Without it the
// test skips with the install hint, except in CI (CI set), where
// scripts/install-e2e has run and a missing tool is a failure.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("%s not found: run scripts/install-e2e to install the end-to-end tools", name)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}
