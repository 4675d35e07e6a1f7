package wire

import (
	"net/http"
	"testing"

	"github.com/kiln-ai/kiln/engine/sampling"
)

// FuzzDecodeLogitBias: any logit_bias either is refused with a 400
// naming it, or gives sorted, unique ids with biases in range.
func FuzzDecodeLogitBias(f *testing.F) {
	for _, s := range []string{`{"1":5}`, `{"7":100,"3":-100}`, `{"x":1}`, `{"1":1e400}`, `[]`, `null`, `{"-1":2}`, `{"01":1,"1":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := decodeLogitBias(raw)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Status != http.StatusBadRequest || len(e.Param) < len("logit_bias") || e.Param[:len("logit_bias")] != "logit_bias" {
				t.Fatalf("error %v: want a 400 naming logit_bias", err)
			}
			return
		}
		for i, b := range got {
			if b.ID < 0 || b.Bias < -sampling.MaxLogitBias || b.Bias > sampling.MaxLogitBias {
				t.Fatalf("entry %+v out of range", b)
			}
			if i > 0 && got[i-1].ID > b.ID {
				t.Fatalf("entries not sorted: %+v", got)
			}
		}
	})
}
