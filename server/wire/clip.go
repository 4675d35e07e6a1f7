package wire

import "unicode/utf8"

// MaxEcho bounds the client input an error message or log line repeats:
// a 1 MB path must not make a 1 MB 404.
const MaxEcho = 256

// Clip returns s, or its first MaxEcho bytes (cut at a rune boundary)
// followed by an ellipsis.
func Clip(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	cut := MaxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
