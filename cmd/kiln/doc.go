// Command kiln is the Kiln inference server and its tools:
//
//	kiln serve      the OpenAI-compatible server (serve.go)
//	kiln generate   offline generation through the engine (generate.go)
//	kiln bench      a source-bound workload runner that compares arms (bench.go)
//	kiln version    the build's version
//
// main parses nothing itself: each subcommand parses its own flags (and, for
// serve, the KILN_* and OTEL_* environment) once, builds its components, and
// returns when its context ends. SIGINT and SIGTERM cancel that context; serve
// then stops admitting, drains in-flight requests within its grace and
// flushes telemetry before it returns.
package main
