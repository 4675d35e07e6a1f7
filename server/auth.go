package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/kiln-ai/kiln/server/wire"
)

// requireToken wraps the handler of route rt so that the request carries
// "Authorization: Bearer <token>" (or "x-api-key: <token>", as
// Anthropic's clients send it), unless the route is open: GET /health,
// and reads of the dashboard's static files (GET /ui, /ui/...), which are
// open because a browser cannot send a bearer header when it loads a
// page; they are embedded static assets that hold no data, and the page
// sends the token on every API call it makes. Tokens are compared in
// constant time (over their SHA-256 digests, so the length does not leak
// either). An empty token disables the check. A refused request moves no
// public counter (outcomes, metrics) and makes no span: whoever has no
// token must not be able to write into what those who have one read.
func (s *Server) requireToken(next http.Handler, rt route) http.Handler {
	if s.cfg.AccessToken == "" || rt.access == open {
		return next
	}
	want := sha256.Sum256([]byte(s.cfg.AccessToken))
	deny := s.handle(func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kiln"`)
		return &wire.Error{Status: http.StatusUnauthorized, Type: wire.TypeAuthentication, Code: "invalid_api_key",
			Message: "missing or invalid access token: send 'Authorization: Bearer <token>' (or 'x-api-key: <token>')"}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.access == openReads && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		got, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			got = r.Header.Get("X-Api-Key") // Anthropic's clients send the key so
			ok = got != ""
		}
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			deny.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearer extracts the token of an "Authorization: Bearer <token>" value;
// the scheme is case-insensitive (RFC 6750).
func bearer(h string) (string, bool) {
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(prefix):])
	return tok, tok != ""
}
