package safetensors

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse: Parse never panics; what it accepts has every tensor inside the
// data section, sized by its dtype and shape, and no two tensors overlap;
// what it refuses wraps ErrFormat.
func FuzzParse(f *testing.F) {
	var good bytes.Buffer
	_ = Write(&good, []Entry{{Name: "w", DType: "F32", Shape: []uint64{2, 2}}, {Name: "b", DType: "BF16", Shape: []uint64{3}}},
		[][]byte{make([]byte, 16), make([]byte, 6)}, map[string]string{"format": "pt"})
	f.Add(good.Bytes())
	f.Add(fileBytes(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)))
	f.Add(fileBytes(`{}`, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		var end uint64
		for i := range file.Tensors {
			tt := &file.Tensors[i]
			if tt.Begin < end {
				t.Fatalf("tensor %q starts at %d, inside the previous one (ends %d)", tt.Name, tt.Begin, end)
			}
			if tt.End > uint64(len(data)) || tt.End-tt.Begin != uint64(DTypeSize(tt.DType))*tt.Elements() {
				t.Fatalf("tensor %q [%d, %d) does not fit or does not match %s %v", tt.Name, tt.Begin, tt.End, tt.DType, tt.Shape)
			}
			if got := file.Data(tt); uint64(len(got)) != tt.End-tt.Begin {
				t.Fatalf("Data of %q has %d bytes", tt.Name, len(got))
			}
			end = max(end, tt.End)
		}
	})
}
