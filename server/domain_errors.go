package server

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/server/wire"
)

// domainError is how one of the engine's sentinel errors reaches a client.
type domainError struct {
	sentinel error
	status   int
	typ      string
	code     string
	message  string // a fixed message; "" keeps the error's own, without the sentinel's prefix
	retry    bool   // the reply carries Retry-After
}

// domainErrors is the one table from the engine's errors to HTTP: the
// engine and its packages return plain sentinels (wrapped with what
// happened), and the server alone decides status, type and code.
var domainErrors = []domainError{
	{engine.ErrQueueFull, http.StatusTooManyRequests, wire.TypeRateLimit, "rate_limit_exceeded", "the server is at capacity; retry later", true},
	{engine.ErrStopped, http.StatusServiceUnavailable, wire.TypeServer, "service_unavailable", "the server is shutting down; retry later", true},
	{errStopping, http.StatusServiceUnavailable, wire.TypeServer, "service_unavailable", "the server is shutting down; retry later", true},
	{engine.ErrTooLong, http.StatusBadRequest, wire.TypeInvalidRequest, "context_length_exceeded", "the prompt does not fit the model's context length", false},
	{engine.ErrRestartRequired, http.StatusServiceUnavailable, wire.TypeServer, "restart_required", "the engine is not healthy; a restart is required", false},
	{engine.ErrNoAdapters, http.StatusServiceUnavailable, wire.TypeServer, "adapters_unavailable", "this server runs no adapters", false},
	{lora.ErrInvalidName, http.StatusBadRequest, wire.TypeInvalidRequest, "invalid_adapter_name", "", false},
	{lora.ErrNotFound, http.StatusNotFound, wire.TypeNotFound, "adapter_not_found", "", false},
	{lora.ErrLayout, http.StatusBadRequest, wire.TypeInvalidRequest, "adapter_layout_invalid", "", false},
	{lora.ErrActive, http.StatusConflict, wire.TypeInvalidRequest, "adapter_active", "", false},
	{train.ErrQueueFull, http.StatusServiceUnavailable, wire.TypeServer, "training_queue_full", "", true},
	{train.ErrStopping, http.StatusServiceUnavailable, wire.TypeServer, "service_unavailable", "the server is shutting down; retry later", true},
	{train.ErrJobNotFound, http.StatusNotFound, wire.TypeNotFound, "training_job_not_found", "", false},
	{train.ErrJobFinished, http.StatusConflict, wire.TypeInvalidRequest, "training_job_finished", "", false},
}

// paramError says which request parameter a domain error is about.
type paramError struct {
	param string
	err   error
}

func (p *paramError) Error() string { return p.err.Error() }
func (p *paramError) Unwrap() error { return p.err }

// about ties err (when not nil) to request parameter param.
func about(param string, err error) error {
	if err == nil {
		return nil
	}
	return &paramError{param: param, err: err}
}

// fromDomain maps err through domainErrors, or returns nil.
func fromDomain(err error, retryAfter time.Duration) *wire.Error {
	for _, d := range domainErrors {
		if !errors.Is(err, d.sentinel) {
			continue
		}
		e := &wire.Error{Status: d.status, Type: d.typ, Code: d.code, Message: d.message, Err: err}
		if e.Message == "" {
			e.Message = strings.Replace(err.Error(), d.sentinel.Error()+": ", "", 1)
		}
		if d.retry {
			e.RetryAfter = retryAfter
		}
		var p *paramError
		if errors.As(err, &p) {
			e.Param = p.param
		}
		return e
	}
	return nil
}
