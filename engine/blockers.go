package engine

import (
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// segmentRing is how many recent identified work segments the actor
// remembers for Token.Blockers. A decode gap spans one cycle (at most one
// ownership wait and one prefill pass of a few requests), so 64 covers many
// cycles; only a first token after a long queue wait can reach further
// back than the ring.
const segmentRing = 64

// segment is one identified piece of the actor's work.
type segment struct {
	kind       BlockerKind
	opKind     timing.OpKind
	req, op    uint64
	start, end time.Time
}

// segments is a fixed ring of the actor's recent segments, appended in the
// order they end (so ends never decrease from oldest to newest).
type segments struct {
	buf [segmentRing]segment
	n   int // segments ever appended
}

// add appends a segment, overwriting the oldest once the ring is full.
func (s *segments) add(kind BlockerKind, req uint64, start, end time.Time) {
	s.buf[s.n%segmentRing] = segment{kind: kind, req: req, start: start, end: end}
	s.n++
}

// addOp appends the hold of a named operation (BlockerOperation).
func (s *segments) addOp(h Hold) {
	s.buf[s.n%segmentRing] = segment{kind: BlockerOperation, opKind: h.Kind, op: h.Op, start: h.Start, end: h.End}
	s.n++
}

// fill sets tok's blockers to the largest segments that lie inside
// [from, to], largest first, the earlier first on equal durations; an
// operation's segment (a barrier interval may begin before a queued
// request arrived) counts for its part inside. It does not allocate.
func (s *segments) fill(tok *Token, from, to time.Time) {
	tok.NumBlockers = 0
	oldest := max(s.n-segmentRing, 0)
	for i := s.n - 1; i >= oldest; i-- {
		g := &s.buf[i%segmentRing]
		if g.end.Before(from) {
			break // ends never decrease: every older segment ends earlier
		}
		start, end := g.start, g.end
		if g.kind == BlockerOperation {
			start, end = timing.Later(start, from), timing.Earlier(end, to)
			if !end.After(start) {
				continue
			}
		}
		if start.Before(from) || end.After(to) {
			continue
		}
		b := Blocker{Kind: g.kind, OpKind: g.opKind, Request: g.req, Op: g.op, Start: start, End: end}
		insertBlocker(tok, b)
	}
}

// insertBlocker places b in tok's sorted blockers, dropping the smallest
// when they are full.
func insertBlocker(tok *Token, b Blocker) {
	d := b.Duration()
	n := tok.NumBlockers
	at := n
	for at > 0 {
		p := &tok.Blockers[at-1]
		pd := p.Duration()
		// Scanning newest to oldest: b is older than every blocker
		// already placed, so on equal durations it goes first.
		if pd > d {
			break
		}
		at--
	}
	if at == MaxBlockers {
		return
	}
	if n == MaxBlockers {
		n--
	}
	copy(tok.Blockers[at+1:n+1], tok.Blockers[at:n])
	tok.Blockers[at] = b
	tok.NumBlockers = n + 1
}
