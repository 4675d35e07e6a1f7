package grammar

import (
	"strings"
	"unicode/utf8"
)

func (c *conv) lengths(n *jnode, path string) (int, int, bool, error) {
	lo, hasLo, err := c.intKeyword(n, "minLength", path)
	if err != nil {
		return 0, 0, false, err
	}
	hi, hasHi, err := c.intKeyword(n, "maxLength", path)
	if err != nil {
		return 0, 0, false, err
	}
	if !hasHi {
		hi = -1
	}
	if lo > c.lim.MaxStates || hi > c.lim.MaxStates {
		return 0, 0, false, &LimitError{What: "grammar states", Limit: c.lim.MaxStates}
	}
	return lo, hi, hasLo || hasHi, nil
}

func (c *conv) stringExpr(n *jnode, path string) (*Expr, error) {
	lo, hi, bounded, err := c.lengths(n, path)
	if err != nil {
		return nil, err
	}
	f, p := n.get("format"), n.get("pattern")
	if f != nil && p != nil {
		return nil, schemaErr("pattern", path, "pattern beside format is not supported")
	}
	if (f != nil || p != nil) && bounded {
		kw := "minLength"
		if n.get(kw) == nil {
			kw = "maxLength"
		}
		return nil, schemaErr(kw, path, "%s beside format or pattern is not supported", kw)
	}
	if f != nil {
		x, err := formatExpr(f, path)
		if err != nil {
			return nil, err
		}
		return Seq(Byte('"'), x, Byte('"')), nil
	}
	if p != nil {
		if p.kind != 's' {
			return nil, schemaErr("pattern", path, "pattern must be a string")
		}
		x, err := patternExpr(p.str, path, c.lim)
		if err != nil {
			return nil, err
		}
		return Seq(Byte('"'), x, Byte('"')), nil
	}
	return jsonStringLen(lo, hi), nil
}

// raw is the raw-text expression of a plain string property, or nil.
func (c *conv) raw(n *jnode, path string) (*Expr, error) {
	for i := 0; n.kind == 'o' && n.get("$ref") != nil && len(constraining(n)) == 1; i++ {
		if i > c.lim.MaxDepth {
			return nil, nil
		}
		t, tp, err := c.resolve(n.get("$ref").str, path)
		if err != nil {
			return nil, err
		}
		n, path = t, tp
	}
	if n.kind != 'o' {
		return nil, nil
	}
	if t := n.get("type"); t == nil || t.kind != 's' || t.str != "string" {
		return nil, nil
	}
	for _, k := range constraining(n) {
		switch k {
		case "type", "enum", "const", "minLength", "maxLength", "format":
		default:
			return nil, nil
		}
	}
	if n.get("nullable") != nil && n.get("nullable").b {
		return nil, nil
	}
	lo, hi, bounded, err := c.lengths(n, path)
	if err != nil {
		return nil, err
	}
	vals, hasEnum, err := c.enumValues(n, path)
	if err != nil {
		return nil, err
	}
	if hasEnum {
		var lits []string
		for _, v := range vals {
			if v.kind != 's' || strings.ContainsFunc(v.str, func(r rune) bool { return r < 0x20 || r == '<' }) {
				continue
			}
			if l := utf8.RuneCountInString(v.str); bounded && (l < lo || hi >= 0 && l > hi) {
				continue
			}
			lits = append(lits, v.str)
		}
		if n.get("format") != nil {
			return nil, nil
		}
		return trie(lits), nil
	}
	if f := n.get("format"); f != nil {
		if bounded {
			return nil, nil
		}
		return formatExpr(f, path)
	}
	return rawStringLen(lo, hi), nil
}

// formatExpr is the text (without quotes) of a string format.
func formatExpr(f *jnode, path string) (*Expr, error) {
	if f.kind != 's' {
		return nil, schemaErr("format", path, "format must be a string")
	}
	d := digit()
	two := func(lo, hi string) *Expr { return digitRange(lo, hi) }
	date := func() *Expr {
		day31 := Alt(Seq(Byte('0'), Class(rng('1', '9'))), Seq(Class(rng('1', '2')), d), Seq(Byte('3'), Class(rng('0', '1'))))
		day30 := Alt(Seq(Byte('0'), Class(rng('1', '9'))), Seq(Class(rng('1', '2')), d), Lit("30"))
		day28 := Alt(Seq(Byte('0'), Class(rng('1', '9'))), Seq(Byte('1'), d), Seq(Byte('2'), Class(rng('0', '8'))))
		m31 := Alt(Lit("01"), Lit("03"), Lit("05"), Lit("07"), Lit("08"), Lit("10"), Lit("12"))
		m30 := Alt(Lit("04"), Lit("06"), Lit("09"), Lit("11"))
		mod4 := Alt(Seq(Byte('0'), Class(rng('4', '4'), rng('8', '8'))), Seq(Class(rng('2', '2'), rng('4', '4'), rng('6', '6'), rng('8', '8')), Class(rng('0', '0'), rng('4', '4'), rng('8', '8'))), Seq(Class(rng('1', '1'), rng('3', '3'), rng('5', '5'), rng('7', '7'), rng('9', '9')), Class(rng('2', '2'), rng('6', '6'))))
		leap := Alt(Seq(d, d, mod4), Seq(mod4, Lit("00")), Lit("0000"))
		year := Repeat(d, 4, 4)
		return Alt(
			Seq(year, Byte('-'), Alt(Seq(m31, Byte('-'), day31), Seq(m30, Byte('-'), day30), Seq(Lit("02-"), day28))),
			Seq(leap, Lit("-02-29")),
		)
	}
	tm := func() *Expr {
		hm := Seq(two("00", "23"), Byte(':'), two("00", "59"))
		return Seq(hm, Byte(':'), two("00", "59"), Opt(Seq(Byte('.'), Repeat(d, 1, 9))),
			Alt(Byte('Z'), Seq(Class(rng('+', '+'), rng('-', '-')), hm)))
	}
	switch f.str {
	case "date":
		return date(), nil
	case "time":
		return tm(), nil
	case "date-time":
		return Seq(date(), Byte('T'), tm()), nil
	case "uuid":
		h := hexDigit()
		return Seq(Repeat(h, 8, 8), Byte('-'), Repeat(h, 4, 4), Byte('-'), Repeat(h, 4, 4), Byte('-'), Repeat(h, 4, 4), Byte('-'), Repeat(h, 12, 12)), nil
	case "email":
		alnum := Class(rng('a', 'z'), rng('A', 'Z'), rng('0', '9'))
		atom := Repeat(Class(rng('a', 'z'), rng('A', 'Z'), rng('0', '9'), rng('_', '_'), rng('%', '%'), rng('+', '+'), rng('-', '-')), 1, 16)
		local := Seq(atom, Repeat(Seq(Byte('.'), atom), 0, 2))
		label := Seq(Repeat(alnum, 1, 20), Opt(Seq(Byte('-'), Repeat(alnum, 1, 20))))
		tld := Repeat(Class(rng('a', 'z'), rng('A', 'Z')), 2, 10)
		return Seq(local, Byte('@'), Repeat(Seq(label, Byte('.')), 1, 3), tld), nil
	}
	return nil, schemaErr("format", path, "format %q is not supported", f.str)
}
