package telemetry

import (
	"sync"

	"go.opentelemetry.io/otel/trace"
)

// recentEnded is how many ended requests stay resolvable after their end,
// so that a blocker that already finished (a long prompt's request ends
// right after its prefill when it generates one token) still links to its
// chat span.
const recentEnded = 256

// registry maps request ids (Request.ID) to their chat spans' contexts:
// every request in flight plus the recentEnded most recently ended ones.
// Memory is bounded by the requests in flight plus recentEnded. It is safe
// for concurrent use; every critical section is a map operation.
type registry struct {
	mu    sync.Mutex
	spans map[uint64]trace.SpanContext
	ended [recentEnded]uint64 // ring of ended ids, oldest overwritten
	n     int                 // ids ever pushed into ended
}

func newRegistry() *registry {
	return &registry{spans: make(map[uint64]trace.SpanContext)}
}

// add registers a started request.
func (g *registry) add(id uint64, sc trace.SpanContext) {
	g.mu.Lock()
	g.spans[id] = sc
	g.mu.Unlock()
}

// end marks id ended: it stays resolvable until recentEnded later ends
// push it out.
func (g *registry) end(id uint64) {
	g.mu.Lock()
	i := g.n % recentEnded
	if g.n >= recentEnded {
		delete(g.spans, g.ended[i])
	}
	g.ended[i] = id
	g.n++
	g.mu.Unlock()
}

// lookup returns the chat span context of request id.
func (g *registry) lookup(id uint64) (trace.SpanContext, bool) {
	g.mu.Lock()
	sc, ok := g.spans[id]
	g.mu.Unlock()
	return sc, ok
}

// size is the number of resolvable requests.
func (g *registry) size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.spans)
}
