package server

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/kiln-ai/kiln/server/anthropic"
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
	// duringDrain routes are served while the server drains for shutdown
	// (the probe reports "draining", scrapes read the final counts);
	// the others then answer 503 (drain.go).
	duringDrain bool
}

// notFoundPattern matches every path no other route does.
const notFoundPattern = "/{unmatched...}"

func (s *Server) routeTable() []route {
	get := http.MethodGet
	return []route{
		{pattern: chatPath, method: http.MethodPost, h: s.chat},
		{pattern: completionsPath, method: http.MethodPost, h: s.completions},
		{pattern: responsesPath, method: http.MethodPost, h: s.responses},
		{pattern: responsesPath + "/{id}", method: get, h: s.getResponse},
		{pattern: anthropic.MessagesPath, method: http.MethodPost, h: s.anthropicMessages},
		{pattern: anthropic.CountTokensPath, method: http.MethodPost, h: s.countTokens},
		{pattern: "/tokenize", method: http.MethodPost, h: s.tokenize},
		{pattern: "/detokenize", method: http.MethodPost, h: s.detokenize},
		{pattern: "/v1/models", method: get, h: s.models},
		{pattern: "/v1/models/{id}", method: get, h: s.modelByID},
		{pattern: "/v1/stats/decode", method: get, h: s.decodeStats, quiet: true},
		{pattern: "/v1/stats/recent-requests", method: get, h: s.recentRequests, quiet: true},
		{pattern: "/v1/stats/recent-requests/{id}", method: get, h: s.recentRequest, quiet: true},
		{pattern: healthPath, method: get, h: s.health, quiet: true, access: open, duringDrain: true},
		{pattern: "/v1/health", method: get, h: s.health, quiet: true, duringDrain: true},
		{pattern: "/v1/debug/model-state", method: get, h: s.debugState},
		{pattern: "/v1/config", method: get, h: s.config},
		{pattern: "/metrics", method: get, h: s.metrics, quiet: true, duringDrain: true},
		{pattern: "/v1/maintenance/trim", method: http.MethodPost, h: s.maintenanceTrim},
		{pattern: "/v1/adapters", method: get, h: s.listAdapters},
		{pattern: "/v1/adapters/load", method: http.MethodPost, h: s.loadAdapter},
		{pattern: "/v1/adapters/unload", method: http.MethodPost, h: s.unloadAdapterRoute},
		{pattern: "/v1/adapters/{name...}", method: http.MethodDelete, h: s.deleteAdapter},
		{pattern: "/v1/maintenance/kv/resize", method: http.MethodPost, h: s.maintenanceKVResize},
		{pattern: "/v1/maintenance/recent", method: get, h: s.maintenanceRecent, quiet: true},
		{pattern: "/v1/train/sft", method: http.MethodPost, h: s.trainSFT},
		{pattern: "/v1/train/queue", method: get, h: s.trainQueueRoute, quiet: true},
		{pattern: "/v1/train/queue/{id}", method: http.MethodDelete, h: s.trainCancel},
		{pattern: "/v1/train/status", method: get, h: s.trainStatus, quiet: true},
		{pattern: "/v1/train/status/{id}", method: get, h: s.trainStatusByID, quiet: true},
		{pattern: "/ui", method: get, h: s.ui, quiet: true, access: openReads},
		{pattern: "/ui/{file...}", method: get, h: s.ui, quiet: true, access: openReads},
		{pattern: "/{$}", method: get, h: redirectToUI, quiet: true, access: openReads},
		{pattern: notFoundPattern, h: notFound},
	}
}

// Route is one endpoint of the HTTP surface as documentation names it.
type Route struct {
	Pattern string // the ServeMux pattern, such as "/v1/models/{id}" or "/{$}"
	Method  string // GET, POST or DELETE
	// Open routes answer without the access token: Method (and HEAD for a
	// GET) for a static file of the dashboard, any method for the probe.
	Open bool
}

// Routes lists the HTTP surface from the table the server registers
// (routeTable), in its order, without the catch-all 404: what the
// documentation's tests check every named route against.
func Routes() []Route {
	var s Server // the handlers are bound, never called
	var out []Route
	for _, rt := range s.routeTable() {
		if rt.pattern == notFoundPattern {
			continue
		}
		out = append(out, Route{Pattern: rt.pattern, Method: rt.method, Open: rt.access != tokenRequired})
	}
	return out
}

// routes registers the table on a ServeMux, behind the Host check
// (hosts.go), which runs before routing. The mux matches first, so each
// route's chain knows its route. The chain, outermost first: the access
// check (an unauthenticated request makes no span and moves no counter),
// the drain gate (drain.go), the HTTP server span unless quiet (otelhttp
// names it after r.Pattern, with the client's W3C traceparent honoured),
// error mapping with bounded writes (errors.go), the method check, and
// for a POST route the body reader (body.go): every route added to the
// table gets all of it.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	topts := []otelhttp.Option{
		otelhttp.WithTracerProvider(s.tel.TracerProvider()),
		otelhttp.WithPropagators(s.tel.Propagator()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			return r.Method + " " + r.Pattern
		}),
	}
	for _, rt := range s.routeTable() {
		h := rt.h
		if rt.method == http.MethodPost {
			h = s.withBody(h)
		}
		if rt.method != "" {
			h = methods(h, rt.method)
		}
		next := requestID(s.handle(h))
		if !rt.quiet {
			next = otelhttp.NewHandler(next, rt.pattern, topts...)
		}
		if !rt.duringDrain {
			next = s.drainGate(next)
		}
		mux.Handle(rt.pattern, s.requireToken(next, rt))
	}
	return s.checkHost(cors(mux, s.cfg.CORSOrigins))
}

// redirectToUI sends GET / to the dashboard.
func redirectToUI(w http.ResponseWriter, r *http.Request) error {
	http.Redirect(w, r, "/ui", http.StatusFound)
	return nil
}

// metrics serves GET /metrics: the Prometheus exposition.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) error {
	s.tel.MetricsHandler().ServeHTTP(w, r)
	return nil
}
