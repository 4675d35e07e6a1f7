package openai

import "github.com/kiln-ai/kiln/server/wire"

// AppendError appends the OpenAI error body for e, with a newline.
func AppendError(b []byte, e *wire.Error) []byte {
	return append(appendErrorObject(b, e), '\n')
}

// appendErrorObject appends the OpenAI error object for e.
func appendErrorObject(b []byte, e *wire.Error) []byte {
	b = append(b, `{"error":{"message":`...)
	b = wire.AppendJSONString(b, e.Message)
	b = append(b, `,"type":`...)
	b = wire.AppendJSONString(b, e.Type)
	b = append(b, `,"param":`...)
	b = wire.AppendNullableString(b, e.Param)
	b = append(b, `,"code":`...)
	b = wire.AppendNullableString(b, e.Code)
	return append(b, "}}"...)
}
