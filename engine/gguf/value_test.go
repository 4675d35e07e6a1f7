package gguf

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRoundTripEveryValueType(t *testing.T) {
	nested, err := ValueOf([]Value{
		mustValue(t, []int32{1, -2}),
		mustValue(t, []string{"a", ""}),
		mustValue(t, []Value{mustValue(t, []bool{true})}),
		mustValue(t, []float64{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		v    Value
		want ValueType
	}{
		{"uint8", mustValue(t, uint8(200)), ValueUint8},
		{"int8", mustValue(t, int8(-100)), ValueInt8},
		{"uint16", mustValue(t, uint16(60000)), ValueUint16},
		{"int16", mustValue(t, int16(-30000)), ValueInt16},
		{"uint32", mustValue(t, uint32(4_000_000_000)), ValueUint32},
		{"int32", mustValue(t, int32(-2_000_000_000)), ValueInt32},
		{"float32", mustValue(t, float32(-1.5e-7)), ValueFloat32},
		{"float32 NaN", mustValue(t, float32(math.NaN())), ValueFloat32},
		{"bool true", mustValue(t, true), ValueBool},
		{"bool false", mustValue(t, false), ValueBool},
		{"string", mustValue(t, "héllo\x00world"), ValueString},
		{"empty string", mustValue(t, ""), ValueString},
		{"uint64", mustValue(t, uint64(math.MaxUint64)), ValueUint64},
		{"int64", mustValue(t, int64(math.MinInt64)), ValueInt64},
		{"float64", mustValue(t, math.Inf(-1)), ValueFloat64},
		{"[]uint8", mustValue(t, []uint8{0, 1, 255}), ValueArray},
		{"[]int8", mustValue(t, []int8{-128, 127}), ValueArray},
		{"[]uint16", mustValue(t, []uint16{1, 65535}), ValueArray},
		{"[]int16", mustValue(t, []int16{-32768, 5}), ValueArray},
		{"[]uint32", mustValue(t, []uint32{7, math.MaxUint32}), ValueArray},
		{"[]int32", mustValue(t, []int32{1, 2, 3, 6}), ValueArray},
		{"[]float32", mustValue(t, []float32{0.5, float32(math.Inf(1))}), ValueArray},
		{"[]bool", mustValue(t, []bool{true, false, true}), ValueArray},
		{"[]string", mustValue(t, []string{"<s>", "", "▁the"}), ValueArray},
		{"[]uint64", mustValue(t, []uint64{math.MaxUint64}), ValueArray},
		{"[]int64", mustValue(t, []int64{math.MinInt64, 0}), ValueArray},
		{"[]float64", mustValue(t, []float64{math.Pi}), ValueArray},
		{"empty []int32", mustValue(t, []int32{}), ValueArray},
		{"nested arrays", nested, ValueArray},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.v.Type() != tt.want {
				t.Fatalf("ValueOf type = %s, want %s", tt.v.Type(), tt.want)
			}
			w := NewWriter()
			w.Set("before", mustValue(t, "x"))
			w.Set("key", tt.v)
			w.Set("after", mustValue(t, uint8(1)))
			f, err := Parse(encode(t, w))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := []KeyValue{{"before", mustValue(t, "x")}, {"key", tt.v}, {"after", mustValue(t, uint8(1))}}
			if diff := cmp.Diff(want, f.KV); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValueOfRejects(t *testing.T) {
	tests := []struct {
		name string
		x    any
	}{
		{"int", 3},
		{"map", map[string]int{}},
		{"nested scalar", []Value{mustValue(t, uint8(1))}},
		{"nil", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, err := ValueOf(tt.x); err == nil {
				t.Errorf("ValueOf(%#v) = %v, want an error", tt.x, v)
			}
		})
	}
}

func TestAccessors(t *testing.T) {
	w := NewWriter()
	w.SetString("s", "str")
	w.SetUint32("u32", 7)
	w.Set("i8neg", mustValue(t, int8(-1)))
	w.Set("i64", mustValue(t, int64(1<<40)))
	w.SetFloat32("f32", 0.25)
	w.Set("f64", mustValue(t, 1e300))
	w.SetBool("b", true)
	w.SetStrings("ss", []string{"a", "b"})
	w.SetInt32s("i32s", []int32{-1, 2})
	w.Set("u8s", mustValue(t, []uint8{1, 2}))
	w.Set("u32big", mustValue(t, []uint32{math.MaxUint32}))
	w.SetFloat32s("f32s", []float32{1.5})
	w.Set("f64s", mustValue(t, []float64{2.5}))
	f, err := Parse(encode(t, w))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		V  any
		OK bool
	}
	r := func(v any, ok bool) result { return result{v, ok} }
	tests := []struct {
		name string
		got  result
		want result
	}{
		{"String", r(f.String("s")), result{"str", true}},
		{"String of uint", r(f.String("u32")), result{"", false}},
		{"String missing", r(f.String("nope")), result{"", false}},
		{"Uint uint32", r(f.Uint("u32")), result{uint64(7), true}},
		{"Uint int64", r(f.Uint("i64")), result{uint64(1 << 40), true}},
		{"Uint negative", r(f.Uint("i8neg")), result{uint64(0), false}},
		{"Uint of float", r(f.Uint("f32")), result{uint64(0), false}},
		{"Float float32", r(f.Float("f32")), result{0.25, true}},
		{"Float float64", r(f.Float("f64")), result{1e300, true}},
		{"Float int", r(f.Float("i8neg")), result{-1.0, true}},
		{"Float of string", r(f.Float("s")), result{0.0, false}},
		{"Bool", r(f.Bool("b")), result{true, true}},
		{"Bool of uint", r(f.Bool("u32")), result{false, false}},
		{"Strings", r(f.Strings("ss")), result{[]string{"a", "b"}, true}},
		{"Strings of string", r(f.Strings("s")), result{[]string(nil), false}},
		{"Int32s", r(f.Int32s("i32s")), result{[]int32{-1, 2}, true}},
		{"Int32s of uint8s", r(f.Int32s("u8s")), result{[]int32{1, 2}, true}},
		{"Int32s overflow", r(f.Int32s("u32big")), result{[]int32(nil), false}},
		{"Float32s", r(f.Float32s("f32s")), result{[]float32{1.5}, true}},
		{"Float32s of float64s", r(f.Float32s("f64s")), result{[]float32{2.5}, true}},
		{"Float32s of int32s", r(f.Float32s("i32s")), result{[]float32(nil), false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
