package grammar

// checkSize refuses an expression whose automaton would have more than
// MaxStates states, before building it.
func (c *conv) checkSize(x *Expr) error {
	memo := map[*Expr]int{}
	if exprSize(x, memo, c.lim.MaxStates) > c.lim.MaxStates {
		return &LimitError{What: "grammar states", Limit: c.lim.MaxStates}
	}
	return nil
}

// exprSize is the states x adds to an automaton, as nfa.build counts
// them, saturating past limit.
func exprSize(x *Expr, memo map[*Expr]int, limit int) int {
	if s, ok := memo[x]; ok {
		return s
	}
	sat := func(v int) int { return min(v, limit+1) }
	s := 0
	switch x.op {
	case opFail:
		s = 1
	case opLit:
		s = len(x.lit)
	case opClass:
		s = 1
	case opSeq:
		for _, y := range x.subs {
			s = sat(s + exprSize(y, memo, limit))
		}
	case opAlt:
		s = 1
		for _, y := range x.subs {
			s = sat(s + 1 + exprSize(y, memo, limit))
		}
	case opRepeat:
		item := 1 + exprSize(x.subs[0], memo, limit)
		s = sat(x.min * item)
		if x.max < 0 {
			s = sat(s + 1 + item)
		} else {
			s = sat(s + 1 + sat((x.max-x.min)*item))
		}
	case opList:
		s = sat(1 + exprSize(x.subs[0], memo, limit) + exprSize(x.subs[1], memo, limit))
	case opMembers:
		sep := exprSize(x.subs[0], memo, limit)
		for i, y := range x.subs[1:] {
			item := exprSize(y, memo, limit)
			s = sat(s + 3 + item)
			if i > 0 {
				s = sat(s + sep + 1 + item)
			}
		}
		s = sat(s + 1)
	}
	memo[x] = s
	return s
}
