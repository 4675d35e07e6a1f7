package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// requireToken wraps next so that every request but GET /health carries
// "Authorization: Bearer <token>". Tokens are compared in constant time
// (over their SHA-256 digests, so the length does not leak either). An
// empty token disables the check.
func (s *Server) requireToken(next http.Handler) http.Handler {
	if s.cfg.AccessToken == "" {
		return next
	}
	want := sha256.Sum256([]byte(s.cfg.AccessToken))
	deny := s.handle(func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kiln"`)
		return &Error{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "invalid_api_key",
			Message: "missing or invalid access token: send 'Authorization: Bearer <token>'"}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			next.ServeHTTP(w, r)
			return
		}
		got, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			if r.URL.Path == chatPath {
				s.countRejected()
			}
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
