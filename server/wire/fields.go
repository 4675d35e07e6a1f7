package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
)

// Typed readers of the fields of a JSON object, each answering a 400 that
// names the field when it has the wrong type.

// JSONKind names the JSON type of a raw value for error messages.
func JSONKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// IsNull reports whether a field is absent or null.
func IsNull(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

// WrongType is the 400 for a field of the wrong JSON type: param wanted
// want, and raw is what it got.
func WrongType(param, want string, raw json.RawMessage) *Error {
	return Invalid(param, "invalid_type", "invalid type for '%s': expected %s, but got %s instead", param, want, JSONKind(raw))
}

// RequiredString reads the field key, which must be a non-empty string.
func RequiredString(fields map[string]json.RawMessage, key string) (string, error) {
	raw, ok := fields[key]
	if !ok || IsNull(raw) {
		return "", Invalid(key, "missing_required_parameter", "missing required parameter: '%s'", key)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", WrongType(key, "a string", raw)
	}
	if s == "" {
		return "", Invalid(key, "invalid_value", "'%s' must not be empty", key)
	}
	return s, nil
}

// optional reads the field key as a T; absent or null is nil, and a
// value that is not a T is a 400 saying it wanted want.
func optional[T any](fields map[string]json.RawMessage, key, want string) (*T, error) {
	raw := fields[key]
	if IsNull(raw) {
		return nil, nil
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, WrongType(key, want, raw)
	}
	return &v, nil
}

// OptionalString reads the field key as a string; absent or null is nil.
func OptionalString(fields map[string]json.RawMessage, key string) (*string, error) {
	return optional[string](fields, key, "a string")
}

// OptionalBool reads the field key as a boolean; absent or null is nil.
func OptionalBool(fields map[string]json.RawMessage, key string) (*bool, error) {
	return optional[bool](fields, key, "a boolean")
}

// OptionalNumber reads a number; one that does not fit a float64 is out
// of range rather than of the wrong type.
func OptionalNumber(fields map[string]json.RawMessage, key string) (*float64, error) {
	v, err := optional[float64](fields, key, "a number")
	if err != nil && JSONKind(fields[key]) == "a number" {
		return nil, Invalid(key, "invalid_value", "'%s' is out of range", key)
	}
	return v, err
}

// OptionalInt reads the field key as an integer (ParseInt); absent or
// null is nil.
func OptionalInt(fields map[string]json.RawMessage, key string) (*int64, error) {
	raw := fields[key]
	if IsNull(raw) {
		return nil, nil
	}
	return ParseInt(key, raw)
}

// ParseInt accepts a JSON integer (an integral float such as 5.0 too) that
// fits int64.
func ParseInt(key string, raw json.RawMessage) (*int64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil || JSONKind(raw) != "a number" {
		return nil, WrongType(key, "an integer", raw)
	}
	if v, err := n.Int64(); err == nil {
		return &v, nil
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return nil, Invalid(key, "invalid_type", "invalid type for '%s': expected an integer, but got a decimal or out-of-range number", key)
	}
	v := int64(f)
	return &v, nil
}

// WithParam names param as the parameter of err when err is (or wraps) a
// client *Error; any other error is returned as it is.
func WithParam(err error, param string) error {
	var e *Error
	if errors.As(err, &e) {
		e.Param = param
	}
	return err
}
