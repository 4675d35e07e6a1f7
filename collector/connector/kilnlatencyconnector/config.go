package kilnlatencyconnector

import (
	"errors"
	"fmt"
	"time"
)

// Config is the kilnlatency connector's configuration.
type Config struct {
	// FlushInterval is how often the cumulative families are emitted to
	// the metrics pipeline (and once more at shutdown).
	FlushInterval time.Duration `mapstructure:"flush_interval"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Bounds of FlushInterval.
const (
	minFlushInterval = 100 * time.Millisecond
	maxFlushInterval = 10 * time.Minute
)

var errFlushInterval = errors.New("kilnlatency: flush_interval out of range")

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.FlushInterval < minFlushInterval || c.FlushInterval > maxFlushInterval {
		return fmt.Errorf("%w: %v, want %v to %v", errFlushInterval, c.FlushInterval, minFlushInterval, maxFlushInterval)
	}
	return nil
}
