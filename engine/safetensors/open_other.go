//go:build !unix

package safetensors

import (
	"fmt"
	"os"
)

// Open reads the file at path into memory and parses it (this platform has
// no memory map support here).
func Open(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return f, nil
}
