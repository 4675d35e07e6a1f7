package server

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
)

// Paths named outside the route table.
const (
	chatPath   = "/v1/chat/completions"
	healthPath = "/health"
)

// access says who may call a route when an access token is configured.
type access uint8

const (
	tokenRequired access = iota
	open                 // anyone, any method: the liveness probe
	openReads            // anyone for GET and HEAD: the dashboard's static files
)

// route is one endpoint of the HTTP surface. The table in routeTable is
// the only list of them: registration, tracing and the access check all
// read it, and wherever a route has to be named (span names) the name is
// the pattern the ServeMux matched (r.Pattern).
type route struct {
	pattern string // ServeMux pattern, without a method: a wrong method is a 405 in the OpenAI shape
	method  string // the allowed method (GET implies HEAD); "" allows any
	h       handlerFunc
	// quiet routes get no HTTP server span: probes, scrapes, the
	// dashboard's polling and its static files recur every few seconds
	// and explain no token's latency, so tracing them would bury the
	// chat traces in a trace back end.
	quiet  bool
	access access
}

// notFoundPattern matches every path no other route does.
const notFoundPattern = "/{unmatched...}"

func (s *Server) routeTable() []route {
	get := http.MethodGet
	return []route{
		{pattern: chatPath, method: http.MethodPost, h: s.chat},
		{pattern: "/v1/models", method: get, h: s.models},
		{pattern: "/v1/models/{id}", method: get, h: s.modelByID},
		{pattern: "/v1/stats/decode", method: get, h: s.decodeStats, quiet: true},
		{pattern: "/v1/stats/recent-requests", method: get, h: s.recentRequests, quiet: true},
		{pattern: "/v1/stats/recent-requests/{id}", method: get, h: s.recentRequest, quiet: true},
		{pattern: healthPath, method: get, h: s.health, quiet: true, access: open},
		{pattern: "/v1/health", method: get, h: s.health, quiet: true},
		{pattern: "/v1/debug/model-state", method: get, h: s.debugState},
		{pattern: "/v1/config", method: get, h: s.config},
		{pattern: "/metrics", method: get, h: s.metrics, quiet: true},
		{pattern: "/ui", method: get, h: s.ui, quiet: true, access: openReads},
		{pattern: "/ui/{file...}", method: get, h: s.ui, quiet: true, access: openReads},
		{pattern: notFoundPattern, h: notFound},
	}
}

// routes registers the table on a ServeMux. The mux matches first, so
// each route's chain (HTTP server span unless quiet, access check, error
// mapping, method check) knows its route: otelhttp names the span after
// r.Pattern, with the client's W3C traceparent honoured.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	topts := []otelhttp.Option{
		otelhttp.WithTracerProvider(s.tel.TracerProvider()),
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			return r.Method + " " + r.Pattern
		}),
	}
	for _, rt := range s.routeTable() {
		h := rt.h
		if rt.method != "" {
			h = methods(h, rt.method)
		}
		next := s.requireToken(s.handle(h), rt)
		if !rt.quiet {
			next = otelhttp.NewHandler(next, rt.pattern, topts...)
		}
		mux.Handle(rt.pattern, next)
	}
	return mux
}

// metrics serves GET /metrics: the Prometheus exposition.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) error {
	s.tel.MetricsHandler().ServeHTTP(w, r)
	return nil
}
