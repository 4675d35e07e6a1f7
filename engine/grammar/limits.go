package grammar

import "fmt"

// Limits bound what compiling and running a grammar may cost, so that a
// hostile schema or tool list is refused (LimitError) instead of slowing
// the server.
type Limits struct {
	// MaxStates bounds the compiled automaton's states; compile time and
	// memory are linear in it.
	MaxStates int
	// MaxDFAStates bounds the deterministic states a grammar builds
	// while it runs (1 KiB each).
	MaxDFAStates int
	// MaxMaskBytes bounds the token masks a grammar keeps; past it masks
	// are computed for each token and not kept.
	MaxMaskBytes int64
	// MaxDepth bounds the nesting of a schema (objects, arrays, anyOf,
	// $ref), and the depth to which an untyped value and a recursive
	// $ref expand.
	MaxDepth int
	// MaxAnyDepth is the nesting an untyped JSON value (json_object, a
	// schema without type) may reach.
	MaxAnyDepth int
	// MaxRefDepth is how often a recursive $ref may expand inside itself.
	MaxRefDepth int
}

// DefaultLimits are the limits the server compiles request grammars
// under: about 20 ms and 40 MB at most for the automaton.
func DefaultLimits() Limits {
	return Limits{
		MaxStates:    500_000,
		MaxDFAStates: 40_000,
		MaxMaskBytes: 64 << 20,
		MaxDepth:     64,
		MaxAnyDepth:  6,
		MaxRefDepth:  4,
	}
}

// LimitError means a grammar would exceed one of its Limits.
type LimitError struct {
	What  string // what grew: "states", "depth", ...
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("grammar: too complex: more than %d %s", e.Limit, e.What)
}
