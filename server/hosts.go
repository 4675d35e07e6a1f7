package server

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/kiln-ai/kiln/server/wire"
)

// The Host check, against DNS rebinding: a web page whose domain resolves
// to 127.0.0.1 makes the user's browser send it requests with that domain
// in Host, and could read what a loopback server answers. So the server
// checks Host before routing:
//
//   - bound to loopback (the default), it serves only the loopback names
//     (localhost, any loopback IP such as 127.0.0.1 or [::1], with or
//     without a port) and the names in Config.AllowedHosts;
//   - bound beyond loopback, it serves every name, unless AllowedHosts is
//     set: then only those and the loopback names (a server reachable
//     from the network is reached by names its operator knows).
//
// "*" in AllowedHosts allows every name. A request without Host (HTTP/1.0)
// passes: no browser sends one. Others get 403 in the OpenAI shape.

// checkHost wraps the whole surface with the Host check.
func (s *Server) checkHost(next http.Handler) http.Handler {
	allowed := make(map[string]bool, len(s.cfg.AllowedHosts))
	for _, h := range s.cfg.AllowedHosts {
		allowed[hostName(h)] = true
	}
	if allowed["*"] || (!s.cfg.Loopback() && len(allowed) == 0) {
		return next
	}
	deny := s.handle(func(_ http.ResponseWriter, r *http.Request) error {
		return &wire.Error{Status: http.StatusForbidden, Type: wire.TypePermission, Code: "host_not_allowed",
			Message: fmt.Sprintf("the host %q is not allowed: this server answers its loopback names and the names given with --allowed-hosts (KILN_ALLOWED_HOSTS)", wire.Clip(r.Host))}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := hostName(r.Host)
		if r.Host == "" || isLoopbackName(name) || allowed[name] {
			next.ServeHTTP(w, r)
			return
		}
		deny.ServeHTTP(w, r)
	})
}

// hostName is the lower-case name of a Host value, without port,
// brackets or a trailing dot.
func hostName(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// isLoopbackName reports whether name can only mean this machine.
func isLoopbackName(name string) bool {
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}
