package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
	"unicode/utf8"

	"github.com/kiln-ai/kiln/server/wire"
)

// Request bodies are read whole, before the handler runs: a route with a
// body (every POST route) gets its body as a *bufferedBody, read under
// its own deadline (Config.BodyTimeout: 408 when it passes), within
// Config.MaxBodyBytes (413, with a lingering close, linger.go) and
// within the server-wide in-flight budget (Config.MaxInflightBytes: 429),
// and checked to be UTF-8 (JSON text is UTF-8; encoding/json would
// silently replace invalid bytes). A client that sends its body slowly
// thus never holds a stream slot, and a body that cannot be read is the
// client's mistake (4xx), never a 500.

// bufferedBody is a request body read whole. The handler may release it
// early (once it has what it needs) so that the budget and the memory
// free before the response ends.
type bufferedBody struct {
	data     []byte
	off      int
	s        *Server
	held     int64
	released bool
}

func (b *bufferedBody) Read(p []byte) (int, error) {
	if b.off >= len(b.data) {
		return 0, io.EOF
	}
	n := copy(p, b.data[b.off:])
	b.off += n
	return n, nil
}

// Close is a no-op: release frees the bytes.
func (b *bufferedBody) Close() error { return nil }

// release returns the body's bytes to the in-flight budget and drops
// them. It is idempotent.
func (b *bufferedBody) release() {
	if b.released {
		return
	}
	b.released = true
	b.s.inflight.give(b.held)
	b.held, b.data = 0, nil
}

// requestBody is the whole body of r: the buffered bytes when the body
// middleware read them, else read now.
func requestBody(r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(*bufferedBody); ok {
		return b.data, nil
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return data, nil
}

// releaseBody frees r's buffered body, if it has one.
func releaseBody(r *http.Request) {
	if b, ok := r.Body.(*bufferedBody); ok {
		b.release()
	}
}

// errBodyTimeout and errInvalidUTF8 are body faults of the client.
var (
	errBodyTimeout = errors.New("request body not received within the body timeout")
	errInvalidUTF8 = errors.New("request body is not valid UTF-8")
	errOverBudget  = errors.New("in-flight request bytes over budget")
)

// withBody reads the request body before next runs (see the comment at
// the top of this file).
func (s *Server) withBody(next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) // not every writer supports it (tests' recorders)
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		body := &bufferedBody{s: s}
		defer body.release()
		err := s.readBody(r, body)
		// No read deadline while the response streams: the server's
		// background read would take its expiry for a gone client.
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			// The rest of the body is not read: the connection closes
			// after the answer (net/http would otherwise read it first,
			// with no deadline, before answering).
			w.Header().Set("Connection", "close")
			body.release()
			s.countRejected() // as the handler counts its own refusals
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) && s.lingerTooLarge(w, r, mbe) {
				return nil // answered on the hijacked connection
			}
			return err
		}
		r.Body = body
		return next(w, r)
	}
}

// readBody reads r's body into b, taking its bytes from the in-flight
// budget as they arrive.
func (s *Server) readBody(r *http.Request, b *bufferedBody) error {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return &http.MaxBytesError{Limit: s.cfg.MaxBodyBytes}
	}
	const step = 32 << 10
	size := int64(step)
	if r.ContentLength >= 0 {
		size = r.ContentLength + 1 // +1 sees EOF without growing
	}
	for {
		if int64(cap(b.data)) < size {
			// The byte past the limit only detects the end: not charged.
			need := min(size, s.cfg.MaxBodyBytes)
			if !s.inflight.take(need - b.held) {
				return errOverBudget
			}
			b.held = need
			grown := make([]byte, len(b.data), size)
			copy(grown, b.data)
			b.data = grown
		}
		n, err := r.Body.Read(b.data[len(b.data):cap(b.data)])
		b.data = b.data[:len(b.data)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return bodyReadError(err)
		}
		if len(b.data) == cap(b.data) {
			if size > s.cfg.MaxBodyBytes {
				return &http.MaxBytesError{Limit: s.cfg.MaxBodyBytes}
			}
			size = min(2*size, s.cfg.MaxBodyBytes+1)
		}
	}
	if !utf8.Valid(b.data) {
		return errInvalidUTF8
	}
	return nil
}

// bodyReadError classifies a failed body read.
func bodyReadError(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%w: %w", errBodyTimeout, err)
	}
	return &wire.Error{Status: http.StatusBadRequest, Type: wire.TypeInvalidRequest, Code: "invalid_body",
		Message: "the request body could not be read: it ended early or its framing is malformed", Err: err}
}

// bodyError maps the body middleware's own faults to client errors.
func bodyError(err error, retryAfter time.Duration) *wire.Error {
	switch {
	case errors.Is(err, errBodyTimeout):
		return &wire.Error{Status: http.StatusRequestTimeout, Type: wire.TypeInvalidRequest, Code: "request_timeout",
			Message: "the request body was not received in time", Err: err}
	case errors.Is(err, errInvalidUTF8):
		return &wire.Error{Status: http.StatusBadRequest, Type: wire.TypeInvalidRequest, Code: "invalid_json",
			Message: "the request body is not valid UTF-8 (JSON text must be UTF-8)", Err: err}
	case errors.Is(err, errOverBudget):
		return &wire.Error{Status: http.StatusTooManyRequests, Type: wire.TypeRateLimit, Code: "rate_limit_exceeded",
			Message: "too many request bytes in flight; retry later", RetryAfter: retryAfter, Err: err}
	}
	return nil
}
