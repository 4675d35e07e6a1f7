package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBodyFaultsAreClientErrors: every way a client can botch its body,
// over a real connection, is a 4xx in the OpenAI shape, never a 500.
func TestBodyFaultsAreClientErrors(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) {
		c.MaxBodyBytes = 1 << 16
		c.MaxInflightBytes = 1 << 20
		c.BodyTimeout = 300 * time.Millisecond
	}))
	good, _ := json.Marshal(h.chatBody(nil))
	badUTF8 := bytes.Replace(good, []byte("sun"), []byte("s\xffn"), 1)
	tests := []struct {
		name       string
		send       func(c net.Conn)
		wantStatus int
		wantCode   string
	}{
		{"truncated body", func(c net.Conn) {
			rawRequest(t, c, chatPath, len(good))
			_, _ = c.Write(good[:10])
			_ = c.(*net.TCPConn).CloseWrite()
		}, 400, "invalid_body"},
		{"malformed chunked framing", func(c net.Conn) {
			rawRequest(t, c, chatPath, -1)
			_, _ = c.Write([]byte("zz\r\n{}\r\n0\r\n\r\n"))
		}, 400, "invalid_body"},
		{"invalid UTF-8 in a JSON string", func(c net.Conn) {
			rawRequest(t, c, chatPath, len(badUTF8))
			_, _ = c.Write(badUTF8)
		}, 400, "invalid_json"},
		{"body read timeout", func(c net.Conn) {
			rawRequest(t, c, chatPath, len(good))
			_, _ = c.Write(good[:10])
		}, 408, "request_timeout"},
		{"over the limit, declared", func(c net.Conn) {
			rawRequest(t, c, chatPath, 1<<17)
		}, 413, "request_too_large"},
		{"over the limit, chunked", func(c net.Conn) {
			rawRequest(t, c, chatPath, -1)
			chunk := strings.Repeat("a", 1<<15)
			for range 3 {
				_, _ = io.WriteString(c, "8000\r\n"+chunk+"\r\n")
			}
		}, 413, "request_too_large"},
	}
	rejected := h.srv.outcomeCounts().Rejected
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", h.hostPort())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			tt.send(c)
			status, body := readResponse(t, c)
			if status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", status, tt.wantStatus, body)
			}
			checkErrorBody(t, []byte(body))
			var e struct{ Error struct{ Code string } }
			_ = json.Unmarshal([]byte(body), &e)
			if e.Error.Code != tt.wantCode {
				t.Errorf("code %q, want %q", e.Error.Code, tt.wantCode)
			}
		})
	}
	waitFor(t, "every budget byte to be returned", func() bool { return h.srv.inflight.inUse() == 0 })
	if got := h.srv.outcomeCounts().Rejected - rejected; got != uint64(len(tests)) {
		t.Errorf("%d requests counted rejected, want %d", got, len(tests))
	}
}

// TestTooLargeIsReadable: a client that sends its whole body, over the
// limit and over more than a moment, before it reads can finish sending
// and then read the 413: the lingering close drains what it sends
// instead of resetting the connection under it (net/http alone closes
// half a second after the answer, and the client's writes then fail).
func TestTooLargeIsReadable(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.MaxBodyBytes = 1 << 16 }))
	const size, piece = 2 << 20, 64 << 10
	c, err := net.Dial("tcp", h.hostPort())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	rawRequest(t, c, chatPath, size)
	chunk := bytes.Repeat([]byte("a"), piece)
	for i := range size / piece {
		if _, err := c.Write(chunk); err != nil {
			t.Fatalf("piece %d of the body: %v (reset before the client could read the 413)", i, err)
		}
		time.Sleep(30 * time.Millisecond) // a client on a slow link, over a second in all
	}
	status, body := readResponse(t, c)
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413: %s", status, body)
	}
	checkErrorBody(t, []byte(body))
}

// TestLargeBodyReadsItsAnswer: a client that sends a body far beyond the
// limit, and beyond the 8 MiB the lingering close once drained at most,
// before it reads still reads the 413, whose message names the flag.
func TestLargeBodyReadsItsAnswer(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) { c.MaxBodyBytes = 1 << 16 }))
	const size = 24 << 20
	c, err := net.Dial("tcp", h.hostPort())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	rawRequest(t, c, chatPath, size)
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for i := range size >> 20 {
		if _, err := c.Write(chunk); err != nil {
			t.Fatalf("MiB %d of the body: %v (closed before the client could read the 413)", i, err)
		}
	}
	status, body := readResponse(t, c)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "--max-body-bytes") {
		t.Fatalf("status %d, want 413 naming --max-body-bytes: %s", status, body)
	}
	checkErrorBody(t, []byte(body))
}

// TestInflightBudget: request bodies beyond the in-flight byte budget are
// refused with 429 and Retry-After while others hold it; the budget is
// returned when they end.
func TestInflightBudget(t *testing.T) {
	h := newHarness(t, withConfig(func(c *Config) {
		c.MaxBodyBytes = 1 << 16
		c.MaxInflightBytes = 1 << 16
		c.BodyTimeout = 5 * time.Second
	}))
	// A body announced at the limit reserves it all while it arrives.
	c, err := net.Dial("tcp", h.hostPort())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	rawRequest(t, c, chatPath, 1<<16-1)
	_, _ = c.Write([]byte("{"))
	waitFor(t, "the body to be reserved", func() bool { return h.srv.inflight.inUse() > 0 })
	if got := h.srv.inflight.inUse(); got < 1<<16-1 || got > 1<<16 {
		t.Errorf("a declared body of %d bytes holds %d budget bytes", 1<<16-1, got)
	}
	status, hdr, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Fatalf("over budget: %d Retry-After %q: %s", status, hdr.Get("Retry-After"), body)
	}
	checkErrorBody(t, body)
	_ = c.Close()
	waitFor(t, "the budget to be returned", func() bool { return h.srv.inflight.inUse() == 0 })
	if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil); status != http.StatusOK {
		t.Fatalf("after the budget returned: %d %s", status, body)
	}
	// A body of exactly the limit fits a budget of exactly the limit.
	b, _ := json.Marshal(h.chatBody(nil))
	full := append(b[:len(b)-1:len(b)-1], []byte(`,"user":"`+strings.Repeat("u", 1<<16-len(b)-10)+`"}`)...)
	if len(full) != 1<<16 {
		t.Fatalf("test body of %d bytes", len(full))
	}
	if status, _, body := h.do(http.MethodPost, chatPath, full, nil); status != http.StatusOK {
		t.Fatalf("a body at the limit: %d %s", status, body)
	}
}
