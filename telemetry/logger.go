package telemetry

import (
	"context"
	"io"
	"os"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/term"
)

// NewLogger returns a zerolog JSON logger writing to w, or a console
// (human) writer when console is set. Events given a context with
// Event.Ctx(ctx) get trace_id and span_id fields from its span.
func NewLogger(w io.Writer, console bool) zerolog.Logger {
	if console {
		w = zerolog.ConsoleWriter{Out: w}
	}
	return zerolog.New(w).With().Timestamp().Logger().Hook(traceHook{})
}

// stderrLogger is the default: JSON to stderr, console when stderr is a
// terminal.
func stderrLogger() zerolog.Logger {
	return NewLogger(os.Stderr, term.IsTerminal(int(os.Stderr.Fd())))
}

// traceHook adds the trace and span ids of the event's context.
type traceHook struct{}

func (traceHook) Run(e *zerolog.Event, _ zerolog.Level, _ string) {
	ctx := e.GetCtx()
	if ctx == nil {
		return
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		e.Str("trace_id", sc.TraceID().String()).Str("span_id", sc.SpanID().String())
	}
}

// WithTrace returns l with the trace_id and span_id of ctx's span as
// fields (unchanged when ctx has none): for a logger used across one
// request.
func WithTrace(ctx context.Context, l zerolog.Logger) zerolog.Logger {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return l
	}
	return l.With().Str("trace_id", sc.TraceID().String()).Str("span_id", sc.SpanID().String()).Logger()
}
