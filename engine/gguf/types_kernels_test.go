package gguf_test

import (
	"testing"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/kernels"
)

// TestTypesAgreeWithKernels keeps the GGUF type table in step with the
// kernels' traits table: every type the kernels run has the same name
// and block layout here, so a file's tensor sizes are checked as the
// kernels will read them.
func TestTypesAgreeWithKernels(t *testing.T) {
	for _, typ := range kernels.Types() {
		elems, bytes, _ := typ.Block()
		if got := gguf.TypeName(uint32(typ)); got != typ.String() {
			t.Errorf("type %d: gguf names it %s, kernels %s", uint32(typ), got, typ)
		}
		got, err := gguf.TensorSize(uint32(typ), []uint64{uint64(elems)})
		if err != nil || got != uint64(bytes) {
			t.Errorf("%v: gguf sizes a block of %d elements at %d bytes (%v), kernels at %d", typ, elems, got, err, bytes)
		}
		if _, err := gguf.TensorSize(uint32(typ), []uint64{uint64(elems) + 1}); elems > 1 && err == nil {
			t.Errorf("%v: gguf accepts a row of %d elements, not a whole number of %d-element blocks", typ, elems+1, elems)
		}
	}
}
