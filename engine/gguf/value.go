package gguf

import (
	"fmt"
	"math"
)

// KeyValue is one metadata entry, in file order.
type KeyValue struct {
	Key   string
	Value Value
}

// Value is a typed metadata value. Scalars hold the Go type of the same
// name (uint8 ... float64, bool, string); arrays of scalars hold a slice of
// it ([]int32, []string, ...); arrays of arrays hold []Value whose elements
// are arrays. The zero Value is invalid (Type reports ValueUint8 but Interface
// is nil); build values with ValueOf or read them from a File.
type Value struct {
	typ  ValueType
	elem ValueType // arrays only
	v    any
}

// ValueOf wraps a Go value: one of uint8, int8, uint16, int16, uint32, int32,
// float32, bool, string, uint64, int64, float64, a slice of one of those, or
// []Value of arrays (a nested array; every element must itself be an array).
func ValueOf(x any) (Value, error) {
	switch x := x.(type) {
	case uint8:
		return Value{typ: ValueUint8, v: x}, nil
	case int8:
		return Value{typ: ValueInt8, v: x}, nil
	case uint16:
		return Value{typ: ValueUint16, v: x}, nil
	case int16:
		return Value{typ: ValueInt16, v: x}, nil
	case uint32:
		return Value{typ: ValueUint32, v: x}, nil
	case int32:
		return Value{typ: ValueInt32, v: x}, nil
	case float32:
		return Value{typ: ValueFloat32, v: x}, nil
	case bool:
		return Value{typ: ValueBool, v: x}, nil
	case string:
		return Value{typ: ValueString, v: x}, nil
	case uint64:
		return Value{typ: ValueUint64, v: x}, nil
	case int64:
		return Value{typ: ValueInt64, v: x}, nil
	case float64:
		return Value{typ: ValueFloat64, v: x}, nil
	case []uint8:
		return array(ValueUint8, x), nil
	case []int8:
		return array(ValueInt8, x), nil
	case []uint16:
		return array(ValueUint16, x), nil
	case []int16:
		return array(ValueInt16, x), nil
	case []uint32:
		return array(ValueUint32, x), nil
	case []int32:
		return array(ValueInt32, x), nil
	case []float32:
		return array(ValueFloat32, x), nil
	case []bool:
		return array(ValueBool, x), nil
	case []string:
		return array(ValueString, x), nil
	case []uint64:
		return array(ValueUint64, x), nil
	case []int64:
		return array(ValueInt64, x), nil
	case []float64:
		return array(ValueFloat64, x), nil
	case []Value:
		for i, e := range x {
			if e.typ != ValueArray {
				return Value{}, fmt.Errorf("gguf: nested array element %d is a %s, not an array", i, e.typ)
			}
		}
		return array(ValueArray, x), nil
	}
	return Value{}, fmt.Errorf("gguf: no metadata type for Go type %T", x)
}

func array(elem ValueType, v any) Value { return Value{typ: ValueArray, elem: elem, v: v} }

// Type is the value's type tag.
func (v Value) Type() ValueType { return v.typ }

// ElemType is the element type of an array value (meaningless otherwise).
func (v Value) ElemType() ValueType { return v.elem }

// Interface is the Go value held (see Value). Slices are shared with the
// File or the caller of ValueOf: do not modify them.
func (v Value) Interface() any { return v.v }

// Len is the number of elements of an array value, 0 for a scalar.
func (v Value) Len() int {
	switch s := v.v.(type) {
	case []uint8:
		return len(s)
	case []int8:
		return len(s)
	case []uint16:
		return len(s)
	case []int16:
		return len(s)
	case []uint32:
		return len(s)
	case []int32:
		return len(s)
	case []float32:
		return len(s)
	case []bool:
		return len(s)
	case []string:
		return len(s)
	case []uint64:
		return len(s)
	case []int64:
		return len(s)
	case []float64:
		return len(s)
	case []Value:
		return len(s)
	}
	return 0
}

// Equal reports whether two values have the same type and contents; floats
// compare by bit pattern, so a NaN equals itself (what a round trip keeps).
func (v Value) Equal(o Value) bool {
	if v.typ != o.typ || (v.typ == ValueArray && v.elem != o.elem) {
		return false
	}
	switch a := v.v.(type) {
	case float32:
		b, ok := o.v.(float32)
		return ok && math.Float32bits(a) == math.Float32bits(b)
	case float64:
		b, ok := o.v.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(b)
	case []uint8:
		return sliceEqual(a, o.v, func(x, y uint8) bool { return x == y })
	case []int8:
		return sliceEqual(a, o.v, func(x, y int8) bool { return x == y })
	case []uint16:
		return sliceEqual(a, o.v, func(x, y uint16) bool { return x == y })
	case []int16:
		return sliceEqual(a, o.v, func(x, y int16) bool { return x == y })
	case []uint32:
		return sliceEqual(a, o.v, func(x, y uint32) bool { return x == y })
	case []int32:
		return sliceEqual(a, o.v, func(x, y int32) bool { return x == y })
	case []float32:
		return sliceEqual(a, o.v, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	case []bool:
		return sliceEqual(a, o.v, func(x, y bool) bool { return x == y })
	case []string:
		return sliceEqual(a, o.v, func(x, y string) bool { return x == y })
	case []uint64:
		return sliceEqual(a, o.v, func(x, y uint64) bool { return x == y })
	case []int64:
		return sliceEqual(a, o.v, func(x, y int64) bool { return x == y })
	case []float64:
		return sliceEqual(a, o.v, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
	case []Value:
		return sliceEqual(a, o.v, Value.Equal)
	}
	return v.v == o.v
}

func sliceEqual[T any](a []T, other any, eq func(x, y T) bool) bool {
	b, ok := other.([]T)
	if !ok || len(a) != len(b) {
		return false
	}
	for i := range a {
		if !eq(a[i], b[i]) {
			return false
		}
	}
	return true
}

// asUint widens any integer to uint64; false for negatives and non-integers.
func asUint(x any) (uint64, bool) {
	switch x := x.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8:
		return nonNegative(int64(x))
	case int16:
		return nonNegative(int64(x))
	case int32:
		return nonNegative(int64(x))
	case int64:
		return nonNegative(x)
	}
	return 0, false
}

func nonNegative(x int64) (uint64, bool) {
	if x < 0 {
		return 0, false
	}
	return uint64(x), true
}

// asInt64 widens any integer that fits to int64.
func asInt64(x any) (int64, bool) {
	switch x := x.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	if u, ok := asUint(x); ok && u <= math.MaxInt64 {
		return int64(u), true
	}
	return 0, false
}

// asFloat widens floats and integers to float64.
func asFloat(x any) (float64, bool) {
	switch x := x.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	if i, ok := asInt64(x); ok {
		return float64(i), true
	}
	if u, ok := asUint(x); ok {
		return float64(u), true
	}
	return 0, false
}
