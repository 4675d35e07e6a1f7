package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Arm is one comparison arm: the base serve command with exactly one flag
// changed, or with none (the baseline).
type Arm struct {
	Name  string // label in the table
	Flag  string // flag name without dashes; "" for the base arguments unchanged
	Value string
}

// ServeArgs is base with the arm's flag added.
func (a Arm) ServeArgs(base []string) []string {
	args := append([]string{}, base...)
	if a.Flag != "" {
		args = append(args, "--"+a.Flag+"="+a.Value)
	}
	return args
}

// ParseArm parses NAME:FLAG=VALUE (FLAG may carry leading dashes), or
// NAME: alone for an arm that runs the base serve arguments unchanged.
func ParseArm(s string) (Arm, error) {
	name, rest, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return Arm{}, fmt.Errorf("arm %q: want NAME:FLAG=VALUE", s)
	}
	if rest == "" {
		return Arm{Name: name}, nil
	}
	flag, value, ok := strings.Cut(rest, "=")
	flag = strings.TrimLeft(flag, "-")
	if !ok || flag == "" {
		return Arm{}, fmt.Errorf("arm %q: want NAME:FLAG=VALUE", s)
	}
	if flag == "addr" {
		return Arm{}, fmt.Errorf("arm %q: --addr is chosen by kiln bench", s)
	}
	return Arm{Name: name, Flag: flag, Value: value}, nil
}

// Server is a `kiln serve` child process started for one arm, on a free
// loopback port.
type Server struct {
	URL  string
	Args []string
	cmd  *exec.Cmd
	log  *tailBuffer
	done chan error
}

// StartServer runs bin with args plus --addr on a free loopback port and
// waits until its /health answers 200 (or ready times out).
func StartServer(ctx context.Context, bin string, args []string, ready time.Duration) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	full := append(append([]string{}, args...), "--addr", addr)
	s := &Server{URL: "http://" + addr, Args: full, log: &tailBuffer{max: 64 << 10}, done: make(chan error, 1)}
	s.cmd = exec.Command(bin, full...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() { s.done <- s.cmd.Wait() }()

	deadline := time.Now().Add(ready)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case err := <-s.done:
			s.done <- err
			return nil, fmt.Errorf("server exited before ready (%v): %s", err, s.log.String())
		case <-ctx.Done():
			_ = s.Stop(context.Background())
			return nil, ctx.Err()
		default:
		}
		resp, err := client.Get(s.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			_ = s.Stop(context.Background())
			return nil, fmt.Errorf("server not ready after %v: %s", ready, s.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop sends SIGTERM, waits for a graceful exit (killing after 20 s or when
// ctx ends) and returns the exit error, nil for a clean exit.
func (s *Server) Stop(ctx context.Context) error {
	if s == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	select {
	case err := <-s.done:
		s.done <- err
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("server exit: %w", err)
		}
		return err
	case <-timer.C:
	case <-ctx.Done():
	}
	_ = s.cmd.Process.Kill()
	err := <-s.done
	s.done <- err
	return errors.New("server did not stop within 20s; killed")
}

// LogTail is the end of the server's combined output.
func (s *Server) LogTail() string { return s.log.String() }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}
