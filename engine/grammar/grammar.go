package grammar

import "sync"

// Grammar is a compiled grammar over a vocabulary, shared by the
// requests that use it. It builds its deterministic states and token
// masks as requests reach them and keeps them for the next request.
type Grammar struct {
	mu       sync.Mutex
	d        *dfa
	vocab    *Vocab
	limits   Limits
	starts   []int32
	lazy     *Lazy   // nil: eager
	masks    []*mask // by state; nil: not computed
	kept     int64   // bytes of masks kept
	stopMask *mask   // only the stop tokens, once a Once grammar is done
	tokens   []int32 // by state: closeTokens, -1 until computed
	walk0    walker
}

// Compile compiles x over the vocabulary v (nil: a grammar that only
// matches strings, for tests and tools).
func Compile(v *Vocab, x *Expr, lim Limits) (*Grammar, error) {
	return compile(v, []*Expr{x}, nil, lim)
}

// Lazy describes a lazy grammar: output is free until it contains one of
// the Triggers, then the text right after the trigger must match the
// trigger's expression in After. Each expression must end with a closer
// after which nothing can follow (such as "</tool_call>"): there the
// part is complete, and output is free again, or, with Once, may only
// stop.
type Lazy struct {
	Triggers []string
	After    []*Expr
	Once     bool

	longest int
}

// CompileLazy compiles a lazy grammar.
func CompileLazy(v *Vocab, l Lazy, lim Limits) (*Grammar, error) {
	if len(l.Triggers) != len(l.After) || len(l.Triggers) == 0 {
		panic("grammar: CompileLazy needs one expression per trigger")
	}
	for _, t := range l.Triggers {
		if t == "" {
			panic("grammar: an empty trigger")
		}
		l.longest = max(l.longest, len(t))
	}
	return compile(v, l.After, &l, lim)
}

func compile(v *Vocab, entries []*Expr, lazy *Lazy, lim Limits) (*Grammar, error) {
	if lim.MaxStates == 0 {
		lim = DefaultLimits()
	}
	n, err := compileNFA(entries, lim.MaxStates)
	if err != nil {
		return nil, err
	}
	g := &Grammar{d: newDFA(n, lim.MaxDFAStates), vocab: v, limits: lim, lazy: lazy}
	for i := range entries {
		g.starts = append(g.starts, g.d.start(i))
	}
	return g, nil
}

// Lazy reports whether the grammar waits for a trigger.
func (g *Grammar) Lazy() bool { return g.lazy != nil }

// MinBytes is the length of the shortest string the grammar (its first
// entry) matches; -1 if it matches none.
func (g *Grammar) MinBytes() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.d.dist[g.starts[0]]
	if d == noDist {
		return -1
	}
	return int(d)
}

// MatchString reports whether the grammar's first entry matches s whole.
func (g *Grammar) MatchString(s string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.after(s)
	return st != dead && g.d.accept[st]
}

// Prefix reports whether s can be continued to a string the grammar's
// first entry matches.
func (g *Grammar) Prefix(s string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.after(s)
	return st != dead && g.d.dist[st] != noDist
}

// Shortest is the shortest string the first entry matches after prefix
// (which must be a Prefix): how the grammar closes what is open.
func (g *Grammar) Shortest(prefix string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.after(prefix)
	if st == dead {
		return ""
	}
	return g.shortestFrom(st)
}

// after is the state of the first entry after s (g.mu held).
func (g *Grammar) after(s string) int32 {
	st := g.starts[0]
	for i := 0; i < len(s) && st != dead; i++ {
		st = g.d.step(st, s[i])
	}
	return st
}
