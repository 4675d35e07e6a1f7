package server

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Slow clients over real HTTP: a client that stops reading and a client
// that sends its body a few bytes at a time must not hold capacity.

const (
	slowGrace   = 300 * time.Millisecond // --evict-grace, and so the write deadline
	slowBodyDue = 500 * time.Millisecond // --body-timeout
)

func slowHarness(t *testing.T, maxStreams int) *harness {
	return newHarness(t, smallBuffers(), withConfig(func(c *Config) {
		c.MaxStreams = maxStreams
		c.Engine.EvictGrace = slowGrace
		c.Engine.DeliveryBuffer = 4
		c.BodyTimeout = slowBodyDue
	}))
}

// startNonReader sends a long stream over a connection with a small
// receive buffer and never reads it.
func startNonReader(t *testing.T, h *harness) net.Conn {
	t.Helper()
	body, _ := json.Marshal(h.chatBody(map[string]any{"stream": true, "max_tokens": 1500, "include_performance": true, "temperature": 1}))
	c := dialSmall(t, h.hostPort())
	rawRequest(t, c, chatPath, len(body))
	if _, err := c.Write(body); err != nil {
		t.Fatal(err)
	}
	return c
}

// startSlowUploader sends a request head and then its body one byte at
// a time, every 50 ms, until the server answers or closes.
func startSlowUploader(t *testing.T, h *harness) (status <-chan int) {
	t.Helper()
	body, _ := json.Marshal(h.chatBody(nil))
	c := dialSmall(t, h.hostPort())
	rawRequest(t, c, chatPath, len(body))
	var wg sync.WaitGroup
	wg.Add(1)
	stop := make(chan struct{})
	go func() {
		defer wg.Done()
		for i := 0; i < len(body)-1; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := c.Write(body[i : i+1]); err != nil {
				return
			}
		}
	}()
	out := make(chan int, 1)
	go func() {
		defer func() { close(stop); wg.Wait() }()
		st, _ := readResponseQuiet(c)
		out <- st
	}()
	return out
}

// readResponseQuiet is readResponse for a goroutine: 0 when none came.
func readResponseQuiet(c net.Conn) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	line := string(buf[:n])
	var code int
	if strings.HasPrefix(line, "HTTP/1.1 ") && len(line) >= 12 {
		for _, ch := range line[9:12] {
			code = code*10 + int(ch-'0')
		}
	}
	return code, err
}

// eventuallyOK posts a normal chat until it gets 200 and returns the
// statuses seen before.
func eventuallyOK(t *testing.T, h *harness) []int {
	t.Helper()
	var seen []int
	waitFor(t, "a normal client's 200", func() bool {
		status, _, _ := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil)
		if status != http.StatusOK {
			seen = append(seen, status)
		}
		return status == http.StatusOK
	})
	return seen
}

// TestSlowReaderFreesStreamSlot: a client that stops reading holds its
// handler in Write only until the write deadline (the eviction grace),
// so its --max-streams slot frees; it used to be held forever.
func TestSlowReaderFreesStreamSlot(t *testing.T) {
	h := slowHarness(t, 1)
	startNonReader(t, h)
	waitFor(t, "the non-reader to take the only slot", func() bool { return len(h.srv.streams) == 1 })
	eventuallyOK(t, h)
	if s := h.eng.Snapshot(); s.Evictions+s.Cancellations == 0 {
		t.Errorf("the non-reader's generation was neither evicted nor cancelled: %+v", s)
	}
}

// TestSlowUploaderHoldsNoSlot: a body sent a byte at a time is read
// before the request takes a stream slot, so a normal client is served
// meanwhile, and the slow body gets 408 at the body deadline (it used to
// hold the slot, then get a 500).
func TestSlowUploaderHoldsNoSlot(t *testing.T) {
	h := slowHarness(t, 1)
	status := startSlowUploader(t, h)
	waitFor(t, "the slow body to be read", func() bool { return h.srv.inflight.inUse() > 0 })
	if seen := eventuallyOK(t, h); len(seen) != 0 {
		t.Errorf("a normal client got %v before 200 while a body trickled in", seen)
	}
	if got := <-status; got != http.StatusRequestTimeout {
		t.Errorf("slow uploader got %d, want 408", got)
	}
	waitFor(t, "the budget to be returned", func() bool { return h.srv.inflight.inUse() == 0 })
}

// TestSlowClientsCannotHoldCapacity is the acceptance check: with
// --max-streams 4, four clients that stop reading and four slow
// uploaders together do not keep a fifth, normal client out once the
// eviction grace and the body deadline have passed.
func TestSlowClientsCannotHoldCapacity(t *testing.T) {
	h := slowHarness(t, 4)
	for range 4 {
		startNonReader(t, h)
	}
	var uploads []<-chan int
	for range 4 {
		uploads = append(uploads, startSlowUploader(t, h))
	}
	waitFor(t, "the non-readers to take every slot", func() bool { return len(h.srv.streams) == 4 })
	time.Sleep(slowGrace + slowBodyDue) // both bounds pass
	eventuallyOK(t, h)
	for i := range 5 {
		if status, _, body := h.do(http.MethodPost, chatPath, h.chatBody(nil), nil); status != http.StatusOK {
			t.Errorf("normal request %d after the bounds: %d %s", i, status, body)
		}
	}
	for i, u := range uploads {
		if got := <-u; got != http.StatusRequestTimeout {
			t.Errorf("slow uploader %d got %d, want 408", i, got)
		}
	}
}
