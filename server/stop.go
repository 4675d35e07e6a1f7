package server

import "strings"

// stopMatcher applies stop sequences to decoded text as it streams. Text
// that could be the start of a stop sequence is held back until it is known
// not to be one, so a stop sequence never reaches the client, even when it
// spans tokens.
type stopMatcher struct {
	stops   []string
	pending string // held back: a suffix that is a prefix of some stop
	hit     string // the stop sequence that ended the text, once one has
}

// push adds decoded text and returns the text that is safe to emit. When a
// stop sequence completes, stopped is true and out is the text before it.
func (m *stopMatcher) push(text string) (out string, stopped bool) {
	if len(m.stops) == 0 {
		return text, false
	}
	buf := m.pending + text
	first := -1
	for _, s := range m.stops {
		if i := strings.Index(buf, s); i >= 0 && (first < 0 || i < first) {
			first, m.hit = i, s
		}
	}
	if first >= 0 {
		m.pending = ""
		return buf[:first], true
	}
	hold := 0
	for _, s := range m.stops {
		// The longest suffix of buf that is a proper prefix of s.
		for k := min(len(s)-1, len(buf)); k > hold; k-- {
			if strings.HasPrefix(s, buf[len(buf)-k:]) {
				hold = k
				break
			}
		}
	}
	m.pending = buf[len(buf)-hold:]
	return buf[:len(buf)-hold], false
}

// flush returns the held-back text at the end of generation.
func (m *stopMatcher) flush() string {
	out := m.pending
	m.pending = ""
	return out
}
