package server

import (
	"context"
)

// memoryPolicy is the engine's automatic memory policy (engine/policy.go).
type memoryPolicy interface {
	RunMemoryPolicy(ctx context.Context) <-chan struct{}
}

// RunMemoryPolicy implements memoryPolicy.
func (g engineGenerator) RunMemoryPolicy(ctx context.Context) <-chan struct{} {
	return g.e.RunMemoryPolicy(ctx)
}

// StartAutoReclaim runs the engine's automatic trims and KV resizes until
// ctx ends when the configuration asks for them (--memory-reclaim
// automatic; otherwise it does nothing), and returns a channel closed once
// the loop has exited: wait for it before shutting the engine down.
func (s *Server) StartAutoReclaim(ctx context.Context) <-chan struct{} {
	p, ok := s.gen.(memoryPolicy)
	if s.cfg.MemoryReclaim != ReclaimAutomatic || !ok {
		done := make(chan struct{})
		close(done)
		return done
	}
	return p.RunMemoryPolicy(ctx)
}
