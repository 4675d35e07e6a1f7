package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// Entry describes a tensor to write: its data follows the previous entry's.
type Entry struct {
	Name  string
	DType string
	Shape []uint64
}

// WriteHeader writes the length and JSON header of a file holding entries
// back to back in the given order, padded with spaces so that the data
// section starts at a multiple of 8 bytes (the writer of the reference
// directories does the same). The caller then writes each entry's bytes, in
// order; Write does both for data held in memory.
func WriteHeader(w io.Writer, entries []Entry, metadata map[string]string) error {
	var buf bytes.Buffer
	buf.WriteByte('{')
	if metadata != nil {
		m, err := json.Marshal(metadata)
		if err != nil {
			return fmt.Errorf("safetensors: write metadata: %w", err)
		}
		buf.WriteString(`"__metadata__":`)
		buf.Write(m)
	}
	var off uint64
	for i, e := range entries {
		size, ok := dtypeSize[e.DType]
		if !ok {
			return fmt.Errorf("safetensors: write %s: unknown dtype %q", e.Name, e.DType)
		}
		n := size
		for _, d := range e.Shape {
			n *= d
		}
		if i > 0 || metadata != nil {
			buf.WriteByte(',')
		}
		name, _ := json.Marshal(e.Name) // a string always marshals
		shape := e.Shape
		if shape == nil {
			shape = []uint64{}
		}
		fmt.Fprintf(&buf, `%s:{"dtype":%q,"shape":`, name, e.DType)
		sh, _ := json.Marshal(shape)
		buf.Write(sh)
		fmt.Fprintf(&buf, `,"data_offsets":[%d,%d]}`, off, off+n)
		off += n
	}
	buf.WriteByte('}')
	for (8+buf.Len())%8 != 0 {
		buf.WriteByte(' ')
	}
	var length [8]byte
	binary.LittleEndian.PutUint64(length[:], uint64(buf.Len()))
	if _, err := w.Write(length[:]); err != nil {
		return fmt.Errorf("safetensors: write header: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("safetensors: write header: %w", err)
	}
	return nil
}

// Write writes a whole file: the header of entries, then data[i] for each
// entry, which must have the entry's size.
func Write(w io.Writer, entries []Entry, data [][]byte, metadata map[string]string) error {
	if len(data) != len(entries) {
		return fmt.Errorf("safetensors: write: %d entries but %d data slices", len(entries), len(data))
	}
	for i, e := range entries {
		n := uint64(len(data[i]))
		if t := (Tensor{Shape: e.Shape}); n != dtypeSize[e.DType]*t.Elements() {
			return fmt.Errorf("safetensors: write %s: %d bytes for a %s %v tensor", e.Name, n, e.DType, e.Shape)
		}
	}
	if err := WriteHeader(w, entries, metadata); err != nil {
		return err
	}
	for i, d := range data {
		if _, err := w.Write(d); err != nil {
			return fmt.Errorf("safetensors: write %s: %w", entries[i].Name, err)
		}
	}
	return nil
}
