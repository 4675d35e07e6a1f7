package server

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Raw-connection helpers for the slow-client tests: clients that stop
// reading or send slowly cannot be written with net/http's client.

// smallBuffers is a harness option: the server's accepted connections
// get a small send buffer, so a client that stops reading blocks the
// server's writes after a few kilobytes instead of megabytes.
func smallBuffers() harnessOption {
	return func(s *harnessSetup) {
		s.wrap = func(ln net.Listener) net.Listener { return smallSendListener{ln} }
	}
}

type smallSendListener struct{ net.Listener }

func (l smallSendListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// dialSmall connects to addr with a small receive buffer (SO_RCVBUF set
// before connect, so the advertised window stays small).
func dialSmall(t testing.TB, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rawRequest writes a request head for a JSON body of the given length
// (-1: chunked) to c.
func rawRequest(t testing.TB, c net.Conn, path string, length int) {
	t.Helper()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n", path)
	if length >= 0 {
		head += fmt.Sprintf("Content-Length: %d\r\n\r\n", length)
	} else {
		head += "Transfer-Encoding: chunked\r\n\r\n"
	}
	if _, err := c.Write([]byte(head)); err != nil {
		t.Fatalf("write request head: %v", err)
	}
}

// readResponse reads one response from c (within 30 s) and returns its
// status and body.
func readResponse(t testing.TB, c net.Conn) (int, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// hostPort is the address of the harness's listener.
func (h *harness) hostPort() string { return strings.TrimPrefix(h.ts.URL, "http://") }
