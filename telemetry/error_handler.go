package telemetry

import (
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
)

// ErrorHandler routes the OpenTelemetry SDK's internal errors (a failed
// export, a dropped span batch) to log as warnings, in the process's one
// log stream instead of the SDK's default stderr logger. cmd installs it
// with otel.SetErrorHandler; it is global to the process, so the library
// never installs it itself.
func ErrorHandler(log zerolog.Logger) otel.ErrorHandler {
	return otel.ErrorHandlerFunc(func(err error) {
		log.Warn().Err(err).Str("component", "opentelemetry").Msg("opentelemetry sdk error")
	})
}
