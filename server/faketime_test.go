package server

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// pipeListener is an in-memory listener: each dial is one net.Pipe. Inside
// a testing/synctest bubble, a goroutine blocked on a pipe is durably
// blocked, so the bubble's fake clock advances past a server and its
// client waiting on each other, which a loopback socket would prevent.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is a loopback address, so the server's Host check lets the
// client's requests through.
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080} }

// dial is the client's half of a new pipe, the server's half accepted.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, errors.New("pipe listener closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// withFakeTime serves the harness over pipes, for a test that runs inside
// synctest.Test: every duration it sees is the fake clock's, so what takes
// time is only what the test makes sleep, and each forward invocation,
// which takes fakeForward.
func withFakeTime() harnessOption {
	return func(s *harnessSetup) { s.fakeTime = true }
}

// fakeForward is what one forward invocation costs under fake time: a
// stream's gaps are this when nothing else holds the engine.
const fakeForward = 2 * time.Millisecond
