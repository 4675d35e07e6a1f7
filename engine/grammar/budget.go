package grammar

// The budget: how many tokens the shortest completion of a document takes
// from a state. The automaton knows the fewest bytes (dist); the fewest
// tokens is bounded above by tokenizing one shortest completion greedily,
// longest token first. The bound is consistent along its own path: the
// shortest completion is chosen by the state alone (the least byte that
// gets closer), so after its first greedy token the rest is the next
// state's shortest completion and its bound one less. A Matcher that only
// allows tokens whose state's bound fits the tokens left therefore always
// has one to allow, and always closes the document.

// closeTokens is the bound from s (g.mu held); noDist when the document
// cannot be closed from s.
func (g *Grammar) closeTokens(s int32) int32 {
	d := g.d
	if d.dist[s] == noDist {
		return noDist
	}
	if d.dist[s] <= 1 || g.vocab == nil {
		return d.dist[s]
	}
	for int(s) >= len(g.tokens) {
		g.tokens = append(g.tokens, -1)
	}
	if t := g.tokens[s]; t >= 0 {
		return t
	}
	str := g.shortestFrom(s)
	n := int32(0)
	for i := 0; i < len(str); n++ {
		l := g.vocab.longest(str[i:])
		if l == 0 {
			n = d.dist[s] // a byte without a token: fall back to bytes
			break
		}
		i += l
	}
	n = min(n, d.dist[s])
	g.tokens[s] = n
	return n
}

// shortestFrom is the shortest completion from s that takes the least
// byte at each step (g.mu held).
func (g *Grammar) shortestFrom(s int32) string {
	d := g.d
	buf := make([]byte, 0, d.dist[s])
	for d.dist[s] > 0 && d.dist[s] != noDist {
		want := d.dist[s] - 1
		next := int32(dead)
		for c := 0; c < 256; c++ {
			if t := d.step(s, byte(c)); t != dead && d.dist[t] == want {
				buf = append(buf, byte(c))
				next = t
				break
			}
		}
		if next == dead {
			break
		}
		s = next
	}
	return string(buf)
}

// fits reports whether the document can still close from s within limit
// tokens.
func (g *Grammar) fits(s, limit int32) bool {
	return g.d.dist[s] <= limit || g.closeTokens(s) <= limit
}
