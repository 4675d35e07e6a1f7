package server

import "unicode/utf8"

// maxEcho bounds the client input an error message or log line repeats:
// a 1 MB path must not make a 1 MB 404.
const maxEcho = 256

// clip returns s, or its first maxEcho bytes (cut at a rune boundary)
// followed by an ellipsis.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
