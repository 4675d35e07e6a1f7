package llama

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kiln-ai/kiln/kernels"
)

func smallCheckpoint(tb testing.TB, untied bool) []byte {
	tb.Helper()
	m, err := NewRandom(Config{Dim: 16, HiddenDim: 24, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 11, SeqLen: 8}, 2, untied)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := WriteLlama2C(nil, m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// header returns data with header field i set to v.
func withHeader(data []byte, i int, v int32) []byte {
	out := append([]byte(nil), data...)
	binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
	return out
}

// TestLlama2CRoundTrip writes random models (shared and separate
// classifier) in the llama2.c format and reads them back unchanged.
func TestLlama2CRoundTrip(t *testing.T) {
	for _, untied := range []bool{false, true} {
		t.Run(map[bool]string{false: "shared", true: "separate"}[untied], func(t *testing.T) {
			data := smallCheckpoint(t, untied)
			m, err := ParseLlama2C(data)
			if err != nil {
				t.Fatal(err)
			}
			if m.Tied() == untied {
				t.Errorf("Tied() = %v, want %v", m.Tied(), !untied)
			}
			again, err := WriteLlama2C(nil, m)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(data, again); diff != "" {
				t.Errorf("rewritten checkpoint differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadLlama2CErrors(t *testing.T) {
	good := smallCheckpoint(t, false)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"short header", good[:20], "truncated"},
		{"header only", good[:28], "bytes of weights"},
		{"truncated weights", good[:len(good)-4], "bytes of weights"},
		{"trailing bytes", append(append([]byte(nil), good...), 0, 0, 0, 0), "bytes of weights"},
		{"version 1 magic", withHeader(good, 0, 0x616b3432), "version 1/2"},
		{"gguf magic", withHeader(good, 0, 0x46554747), "GGUF"},
		{"zero dim", withHeader(good, 0, 0), "dim 0"},
		{"negative layers", withHeader(good, 2, -3), "n_layers -3"},
		{"dim not multiple of heads", withHeader(good, 3, 3), "not a multiple of n_heads"},
		{"kv heads above heads", withHeader(good, 4, 8), "n_kv_heads 8"},
		{"odd head size", withHeader(withHeader(good, 3, 16), 4, 16), "head size 1 is odd"},
		{"zero vocab", withHeader(good, 5, 0), "vocab_size 0"},
		{"huge dims", withHeader(withHeader(good, 0, 1<<24), 1, 1<<24), "too large"},
		{"huge seq_len", withHeader(good, 6, 1<<30), "seq_len"},
		{"wrong vocab", withHeader(good, 5, 12), "bytes of weights"},
		{"untied flag without classifier", withHeader(good, 5, -11), "untied true"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLlama2C(tc.data)
			if err == nil {
				t.Fatalf("ParseLlama2C succeeded, want error containing %q", tc.want)
			}
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want ErrFormat and %q", err, tc.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := LoadLlama2C(filepath.Join(t.TempDir(), "absent.bin"))
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("error %v, want os.ErrNotExist", err)
		}
	})
}

// FuzzLoadLlama2C: any input either fails with an error wrapping ErrFormat
// or loads a model that is consistent, runs, and writes back to a checkpoint
// that loads to the same bytes.
func FuzzLoadLlama2C(f *testing.F) {
	f.Add(smallCheckpoint(f, false))
	f.Add(smallCheckpoint(f, true))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseLlama2C(data)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error does not wrap ErrFormat: %v", err)
			}
			return
		}
		if err := m.validate(); err != nil {
			t.Fatalf("loaded an invalid model: %v", err)
		}
		out, err := WriteLlama2C(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(data) {
			t.Fatalf("rewritten checkpoint is %d bytes, input %d", len(out), len(data))
		}
		m2, err := ParseLlama2C(out)
		if err != nil {
			t.Fatalf("rewritten checkpoint does not load: %v", err)
		}
		if diff := cmp.Diff(m.Config, m2.Config); diff != "" {
			t.Fatalf("config changed (-first +second):\n%s", diff)
		}
		s := m.NewState(1, kernels.NewPool(1))
		s.Forward([]Row{{Pos: m.Config.SeqLen - 1, Token: m.Config.Vocab - 1, Logits: true}}, [][]float32{make([]float32, m.Config.Vocab)})
	})
}
