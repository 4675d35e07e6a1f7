// Package toolcall parses a model's output into OpenAI tool calls.
package toolcall
