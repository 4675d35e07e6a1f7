package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// flagAliases are the flags people reach for from other servers, mapped
// to Kiln's.
var flagAliases = map[string]string{
	"port": "addr", "host": "addr", "listen": "addr", "bind": "addr",
	"model-path": "model", "m": "model", "ctx-size": "context", "c": "context", "n-ctx": "context",
	"threads-batch": "threads", "t": "threads", "api-key": "access-token",
}

// parseFlags parses args into fs, whose output is where help goes. Help
// asked for (-h, --help) prints the usage there and returns flag.ErrHelp;
// a mistake returns a usageError of one line instead of the whole usage:
// the error, the flag probably meant ("did you mean --prefill-chunk?"),
// how to write a duration when one was expected, and where every flag is
// listed.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		usage()
		return flag.ErrHelp
	}
	name := "kiln " + strings.TrimPrefix(fs.Name(), "kiln ")
	return usageError{fmt.Errorf("%v%s (%s --help lists every flag)", err, flagHint(fs, err.Error()), name)}
}

// flagHint is what to add to a flag error msg from fs: a suggestion for an
// unknown flag, the form of a duration for a bad one.
func flagHint(fs *flag.FlagSet, msg string) string {
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		name = strings.TrimPrefix(name, "-")
		if s := closestFlag(fs, name); s != "" {
			return fmt.Sprintf("; did you mean --%s?", s)
		}
		return ""
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if i := strings.Index(rest, " for flag -"); i >= 0 {
			name, _, _ := strings.Cut(rest[i+len(" for flag -"):], ":")
			if f := fs.Lookup(name); f != nil && fmt.Sprintf("%T", f.Value) == "*flag.durationValue" {
				return "; use a Go duration such as 30s, 500ms or 2m"
			}
		}
	}
	return ""
}

// closestFlag is the flag of fs that name most likely meant: an alias, a
// flag it is a prefix or extension of, or one within a few edits; "" when
// none is close.
func closestFlag(fs *flag.FlagSet, name string) string {
	if a, ok := flagAliases[name]; ok && fs.Lookup(a) != nil {
		return a
	}
	best, bestD := "", max(2, len(name)/3)+1
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
