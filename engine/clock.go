package engine

import "time"

// Clock is the source of every instant the engine reports. Tests inject a
// fake one; the default reads the process's monotonic clock.
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Option configures an Engine beyond its Config: injected collaborators.
type Option func(*Engine)

// WithClock makes the engine take every instant from c.
func WithClock(c Clock) Option {
	return func(e *Engine) {
		if c != nil {
			e.clock = c
		}
	}
}
