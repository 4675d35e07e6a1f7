package server

import (
	"fmt"
	"net/http"
	"net/url"
)

// CORS is off by default: a browser page from another origin cannot read
// the API's answers. Config.CORSOrigins (--cors-origin) lists the origins
// allowed to: their requests get Access-Control-Allow-Origin naming the
// origin (never "*", so a bearer token may be sent), and their preflight
// OPTIONS requests are answered here, before the access-token check, since
// a browser sends no Authorization header on a preflight. Requests from
// other origins are served without CORS headers, which the browser blocks.

// corsAnyOrigin in CORSOrigins allows every origin.
const corsAnyOrigin = "*"

// validateOrigins checks that each entry is "*" or a scheme://host[:port]
// origin as browsers send it in the Origin header.
func validateOrigins(origins []string) error {
	for _, o := range origins {
		if o == corsAnyOrigin {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("cors_origin: %q is not an origin like https://app.example.com or http://localhost:3000 (or *)", o)
		}
	}
	return nil
}

// cors wraps h with the CORS policy of the listed origins; with none it
// returns h unchanged.
func cors(h http.Handler, origins []string) http.Handler {
	if len(origins) == 0 {
		return h
	}
	allowed := make(map[string]bool, len(origins))
	for _, o := range origins {
		u, err := url.Parse(o)
		if err == nil && o != corsAnyOrigin {
			o = u.Scheme + "://" + u.Host
		}
		allowed[o] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			h.ServeHTTP(w, r)
			return
		}
		hdr := w.Header()
		hdr.Add("Vary", "Origin")
		if !allowed[origin] && !allowed[corsAnyOrigin] {
			h.ServeHTTP(w, r)
			return
		}
		hdr.Set("Access-Control-Allow-Origin", origin)
		hdr.Set("Access-Control-Expose-Headers", "X-Request-Id, Retry-After")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hdr.Add("Vary", "Access-Control-Request-Method")
			hdr.Add("Vary", "Access-Control-Request-Headers")
			hdr.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			hdr.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Api-Key, Anthropic-Version, Anthropic-Beta, traceparent, tracestate")
			hdr.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}
