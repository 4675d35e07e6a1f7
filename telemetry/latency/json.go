package latency

import (
	"math"
	"strconv"
)

// NullFloat is a float64 that may be null: Valid false means the value was
// not observed (JSON null), Valid true with V == 0 means measured as zero.
type NullFloat struct {
	V     float64
	Valid bool
}

// Float returns a valid NullFloat holding v.
func Float(v float64) NullFloat { return NullFloat{V: v, Valid: true} }

// MarshalJSON implements json.Marshaler: the number, or null.
func (f NullFloat) MarshalJSON() ([]byte, error) { return f.appendJSON(nil), nil }

func (f NullFloat) appendJSON(b []byte) []byte {
	if !f.Valid {
		return append(b, "null"...)
	}
	return appendFloat(b, f.V)
}

func appendKey(b []byte, k string) []byte {
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

func appendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// AppendFloat appends f as a JSON number formatted as encoding/json
// formats it; NaN and ±Inf, which JSON cannot carry, are written as null.
// It is the one float writer of the project's hand-written JSON (the
// server's responses use it too).
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return appendFloat(b, f)
}

// appendFloat formats like encoding/json: shortest representation, 'e'
// notation only for very small or very large magnitudes. NaN and ±Inf
// cannot come out of the derivation; they are written as 0 so the output
// stays valid JSON.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
