package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Draining for shutdown. Shutdown stops admitting at once but keeps the
// listener open: a request that arrives while in-flight ones finish gets
// 503 with Retry-After (not a refused connection), /health answers 503
// "draining", and responses close their connections. When the in-flight
// requests finish, or the grace (Shutdown's context) ends first, the
// listener closes; at the deadline every request still running is cut
// cleanly: a stream ends with an OpenAI error event and "data: [DONE]", a
// non-streaming request gets a 503 body (exchange.go), and Shutdown
// reports ErrDrainCut so the process can exit non-zero.

// ErrDrainCut is returned by Shutdown when its context ended with
// requests still in flight, which were then cut.
var ErrDrainCut = errors.New("server: the shutdown grace ended with requests in flight; they were cut")

// cutBound is how long cut requests get to write their ends, and the
// server to close, once the grace has passed.
const cutBound = 2 * time.Second

// drainGate counts the requests of a route that is refused while the
// server drains, and refuses them then (503 with Retry-After).
func (s *Server) drainGate(next http.Handler) http.Handler {
	refuse := s.handle(func(http.ResponseWriter, *http.Request) error { return errStopping })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.enter() {
			refuse.ServeHTTP(w, r)
			return
		}
		defer s.leave()
		next.ServeHTTP(w, r)
	})
}

// enter counts one more request in flight, unless the server drains.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping.Load() {
		return false
	}
	s.active++
	return true
}

// leave ends a request counted by enter.
func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.active == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// beginDrain stops admitting and returns a channel closed once no counted
// request is in flight.
func (s *Server) beginDrain() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping.Store(true)
	idle := make(chan struct{})
	if s.active == 0 {
		close(idle)
	} else {
		s.idle = idle
	}
	return idle
}

// drain waits for the in-flight requests until ctx ends, then cuts the
// remaining ones and waits (at most cutBound) for them to end.
func (s *Server) drain(ctx context.Context, idle <-chan struct{}) error {
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
	}
	s.cutOnce.Do(func() { close(s.cut) })
	t := time.NewTimer(cutBound)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
	return fmt.Errorf("%w: %w", ErrDrainCut, ctx.Err())
}
