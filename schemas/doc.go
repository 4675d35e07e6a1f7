// Package schemas embeds the JSON Schemas of the inference and
// observability objects and the trace contract, for tests and tools.
package schemas
