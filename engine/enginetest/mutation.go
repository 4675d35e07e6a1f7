package enginetest

import (
	"sync"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/internal/timing"
)

// Mutation is a fake engine.Mutation standing in for a KV resize or an
// adapter swap at the actor barrier: Apply sleeps Delay (exact under
// testing/synctest), runs OnApply if set, records itself in Log, and
// returns Err.
type Mutation struct {
	Name    string
	Slot    timing.BackendPhase // engine.PhaseResize or engine.PhaseAdapter
	Delay   time.Duration
	Err     error
	OnApply func(b engine.Backend)
	Log     *Log
}

// Phase implements engine.Mutation.
func (m *Mutation) Phase() timing.BackendPhase { return m.Slot }

// Apply implements engine.Mutation.
func (m *Mutation) Apply(b engine.Backend) error {
	time.Sleep(m.Delay)
	if m.OnApply != nil {
		m.OnApply(b)
	}
	if m.Log != nil {
		m.Log.Add(m.Name)
	}
	return m.Err
}

// Log is an ordered record of names, safe from any goroutine.
type Log struct {
	mu    sync.Mutex
	names []string
}

// Add appends name.
func (l *Log) Add(name string) {
	l.mu.Lock()
	l.names = append(l.names, name)
	l.mu.Unlock()
}

// Names returns a copy of the names so far.
func (l *Log) Names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.names...)
}
