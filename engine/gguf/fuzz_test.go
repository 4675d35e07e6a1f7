package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// checkParsed parses data and, when it is accepted, checks the invariants
// every caller relies on: each tensor with a known type has its data inside
// the buffer, and writing the parsed file back yields the same metadata,
// tensor descriptors (but offsets, which the writer packs) and tensor data.
func checkParsed(t *testing.T, data []byte) {
	t.Helper()
	f, err := Parse(data)
	if err != nil {
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("Parse error %q does not wrap ErrFormat", err)
		}
		return
	}
	w := NewWriter()
	for _, kv := range f.KV {
		w.Set(kv.Key, kv.Value)
	}
	datas := make([][]byte, len(f.Tensors))
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		b, err := f.TensorData(ti)
		if errors.Is(err, ErrUnsupportedTensorType) {
			continue // written back without data below
		}
		if err != nil {
			t.Fatalf("accepted file, but TensorData(%q): %v", ti.Name, err)
		}
		if !within(b, data) {
			t.Fatalf("TensorData(%q) is not inside the buffer", ti.Name)
		}
		datas[i] = b
		w.AddTensor(ti.Name, ti.Dims, ti.Type, b)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatalf("accepted file does not write back: %v", err)
	}
	g, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("written-back file does not parse: %v", err)
	}
	if diff := cmp.Diff(f.KV, g.KV); diff != "" {
		t.Fatalf("metadata after write-back (-want +got):\n%s", diff)
	}
	var want []TensorInfo
	for i, ti := range f.Tensors {
		if datas[i] != nil {
			want = append(want, TensorInfo{Name: ti.Name, Dims: ti.Dims, Type: ti.Type})
		}
	}
	var got []TensorInfo
	for i := range g.Tensors {
		ti := g.Tensors[i]
		b, err := g.TensorData(&ti)
		if err != nil {
			t.Fatalf("written-back TensorData(%q): %v", ti.Name, err)
		}
		orig, _ := f.Tensor(ti.Name)
		if ob, _ := f.TensorData(orig); !bytes.Equal(ob, b) {
			t.Fatalf("tensor %q data changed on write-back", ti.Name)
		}
		ti.Offset = 0
		got = append(got, ti)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("tensors after write-back (-want +got):\n%s", diff)
	}
}

func within(b, buf []byte) bool {
	if len(b) == 0 {
		return true
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(buf))
}

func FuzzParse(f *testing.F) {
	f.Add(encode(f, sampleWriter()))
	f.Add([]byte(header(3, 0, 0)))
	f.Add([]byte(header(2, 1, 1).str(KeyAlignment).u32(uint32(ValueUint32)).u32(8).tensor("t", TypeF16, 0, 2).pad(8).u32(0)))
	f.Add([]byte(header(3, 0, 1).str("n").u32(uint32(ValueArray)).u32(uint32(ValueArray)).u64(1).u32(uint32(ValueString)).u64(1).str("x")))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParsed(t, data)
	})
}

// gen builds values, keys and tensors from fuzz bytes.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	x := g.b[0]
	g.b = g.b[1:]
	return x
}

func (g *gen) u64() uint64 {
	var p [8]byte
	n := copy(p[:], g.b)
	g.b = g.b[n:]
	return binary.LittleEndian.Uint64(p[:])
}

func (g *gen) str() string {
	n := min(int(g.byte()%16), len(g.b))
	s := string(g.b[:n])
	g.b = g.b[n:]
	return s
}

func genSlice[T any](g *gen, f func() T) []T {
	s := make([]T, g.byte()%5)
	for i := range s {
		s[i] = f()
	}
	return s
}

func (g *gen) value(depth int) Value {
	var x any
	switch k := g.byte() % 26; k {
	case 0:
		x = g.byte()
	case 1:
		x = int8(g.byte())
	case 2:
		x = uint16(g.u64())
	case 3:
		x = int16(g.u64())
	case 4:
		x = uint32(g.u64())
	case 5:
		x = int32(g.u64())
	case 6:
		x = math.Float32frombits(uint32(g.u64()))
	case 7:
		x = g.byte()&1 == 1
	case 8:
		x = g.str()
	case 9:
		x = g.u64()
	case 10:
		x = int64(g.u64())
	case 11:
		x = math.Float64frombits(g.u64())
	case 12:
		x = genSlice(g, g.byte)
	case 13:
		x = genSlice(g, func() int8 { return int8(g.byte()) })
	case 14:
		x = genSlice(g, func() uint16 { return uint16(g.u64()) })
	case 15:
		x = genSlice(g, func() int16 { return int16(g.u64()) })
	case 16:
		x = genSlice(g, func() uint32 { return uint32(g.u64()) })
	case 17:
		x = genSlice(g, func() int32 { return int32(g.u64()) })
	case 18:
		x = genSlice(g, func() float32 { return math.Float32frombits(uint32(g.u64())) })
	case 19:
		x = genSlice(g, func() bool { return g.byte()&1 == 1 })
	case 20:
		x = genSlice(g, g.str)
	case 21:
		x = genSlice(g, g.u64)
	case 22:
		x = genSlice(g, func() int64 { return int64(g.u64()) })
	case 23:
		x = genSlice(g, func() float64 { return math.Float64frombits(g.u64()) })
	default:
		if depth >= 3 {
			x = []Value{}
			break
		}
		x = genSlice(g, func() Value {
			for {
				if v := g.value(depth + 1); v.Type() == ValueArray {
					return v
				}
				if len(g.b) == 0 {
					return array(ValueUint8, []uint8{})
				}
			}
		})
	}
	v, err := ValueOf(x)
	if err != nil {
		panic(err) // a bug in the generator, not in the input
	}
	return v
}

// FuzzRoundTrip generates a file (metadata of every type, tensors of the
// supported types), writes it and checks Parse returns exactly what was
// written.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x03\x08abc\x18\x02\x05\x19\x01\x0c\x03\x01\x02\x03\x01\x04\x07\x07\x07\x07"))
	f.Fuzz(func(t *testing.T, in []byte) {
		g := &gen{b: in}
		w := NewWriter()
		want := []KeyValue{}
		seen := map[string]bool{}
		for range g.byte() % 8 {
			k, v := g.str(), g.value(0)
			if seen[k] || k == KeyAlignment {
				continue
			}
			seen[k] = true
			w.Set(k, v)
			want = append(want, KeyValue{k, v})
		}
		type tensor struct {
			info TensorInfo
			data []byte
		}
		var tensors []tensor
		for i := range g.byte() % 4 {
			name := string(rune('a'+i)) + g.str()
			typ := []uint32{TypeF32, TypeF16, TypeQ8_0}[g.byte()%3]
			dims := []uint64{uint64(g.byte()%3) * 32}
			if g.byte()&1 == 1 {
				dims = append(dims, uint64(g.byte()%3))
			}
			size, err := TensorSize(typ, dims)
			if err != nil {
				t.Fatal(err)
			}
			data := make([]byte, size)
			for j := range data {
				data[j] = g.byte()
			}
			w.AddTensor(name, dims, typ, data)
			tensors = append(tensors, tensor{TensorInfo{Name: name, Dims: dims, Type: typ}, data})
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		file, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("Parse(write(x)): %v", err)
		}
		if diff := cmp.Diff(want, file.KV); diff != "" {
			t.Fatalf("metadata (-want +got):\n%s", diff)
		}
		if len(file.Tensors) != len(tensors) {
			t.Fatalf("%d tensors, want %d", len(file.Tensors), len(tensors))
		}
		for i, tt := range tensors {
			got := file.Tensors[i]
			if got.Offset%file.Alignment() != 0 {
				t.Errorf("tensor %q offset %d is not aligned", got.Name, got.Offset)
			}
			got.Offset = 0
			if diff := cmp.Diff(tt.info, got); diff != "" {
				t.Errorf("tensor %d (-want +got):\n%s", i, diff)
			}
			data, err := file.TensorData(&file.Tensors[i])
			if err != nil || !bytes.Equal(data, tt.data) {
				t.Errorf("tensor %q data: %v, equal %v", got.Name, err, bytes.Equal(data, tt.data))
			}
		}
	})
}
