package gguf

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Describe writes a human-readable summary of the file for debugging: the
// header, every metadata entry (long strings and arrays abbreviated) and
// every tensor with its type, shape, offset and size.
func (f *File) Describe(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "GGUF v%d: %d metadata entries, %d tensors, alignment %d, data at offset %d\n",
		f.Version, len(f.KV), len(f.Tensors), f.alignment, f.dataStart)
	if len(f.KV) > 0 {
		fmt.Fprintln(tw, "metadata:")
	}
	for _, kv := range f.KV {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", kv.Key, describeType(kv.Value), FormatValue(kv.Value, 8))
	}
	if len(f.Tensors) > 0 {
		fmt.Fprintln(tw, "tensors:")
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		size := "?"
		if n, err := t.Size(); err == nil {
			size = fmt.Sprint(n)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%v\toffset %d\t%s bytes\n", t.Name, TypeName(t.Type), t.Dims, t.Offset, size)
	}
	return tw.Flush()
}

func describeType(v Value) string {
	if v.typ != ValueArray {
		return v.typ.String()
	}
	return fmt.Sprintf("[%d]%s", v.Len(), v.elem)
}

// FormatValue renders v for people: strings quoted and cut after 64 bytes,
// arrays showing at most maxElems elements.
func FormatValue(v Value, maxElems int) string {
	var b strings.Builder
	formatValue(&b, v, maxElems)
	return b.String()
}

func formatValue(b *strings.Builder, v Value, maxElems int) {
	switch x := v.v.(type) {
	case string:
		b.WriteString(quoteShort(x))
		return
	case []Value:
		formatElems(b, len(x), maxElems, func(i int) { formatValue(b, x[i], maxElems) })
		return
	case []string:
		formatElems(b, len(x), maxElems, func(i int) { b.WriteString(quoteShort(x[i])) })
		return
	}
	if v.typ == ValueArray {
		s := reflect.ValueOf(v.v)
		formatElems(b, s.Len(), maxElems, func(i int) { fmt.Fprint(b, s.Index(i).Interface()) })
		return
	}
	fmt.Fprint(b, v.v)
}

func formatElems(b *strings.Builder, n, maxElems int, elem func(i int)) {
	b.WriteByte('[')
	for i := range min(n, maxElems) {
		if i > 0 {
			b.WriteString(", ")
		}
		elem(i)
	}
	if n > maxElems {
		fmt.Fprintf(b, ", ... (%d more)", n-maxElems)
	}
	b.WriteByte(']')
}

func quoteShort(s string) string {
	const limit = 64
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}
