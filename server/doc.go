// Package server is the HTTP transport: the OpenAI-compatible handlers, the
// SSE writer, stats, health, debug, config, the recent-requests ring, the
// embedded dashboard and the auth middleware.
package server
