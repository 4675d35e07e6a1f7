package llama

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine/gguf"
	"github.com/kiln-ai/kiln/kernels"
)

// wrongFiles writes, under dir, one file or directory of every kind a user
// may pass as --model by mistake, and the models Open loads, keyed by a
// name for the test table.
func wrongFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	small, err := NewRandom(Config{Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 40, SeqLen: 32}, 9, false)
	if err != nil {
		t.Fatal(err)
	}
	ckpt, err := WriteLlama2C(nil, small)
	if err != nil {
		t.Fatal(err)
	}
	model := ggufBytes(t, small, kernels.F32, nil)
	var adapter bytes.Buffer
	w := gguf.NewWriter()
	w.SetString("general.type", "adapter")
	w.SetString("adapter.type", "lora")
	w.SetFloat32("adapter.lora.alpha", 16)
	w.AddTensor("blk.0.attn_q.weight.lora_a", []uint64{32, 4}, gguf.TypeF32, make([]byte, 4*32*4))
	if _, err := w.WriteTo(&adapter); err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	if _, err := zw.Create("archive/data.pkl"); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	header := []byte(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`)
	st := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	st = append(append(st, header...), 0, 0, 0, 0)
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	files := map[string][]byte{
		"model.gguf": model, "q8.gguf": ggufBytes(t, small, kernels.Q8_0, nil), "story.bin": ckpt, "lora.gguf": adapter.Bytes(),
		"truncated.gguf": model[:64], "empty.bin": nil, "random.bin": random,
		"notes.txt": []byte("dim 288\nlayers 6\n"), "pytorch_model.bin": zipped.Bytes(),
		"model.safetensors": st, "pickle.pt": {0x80, 0x02, 'c', 'x'},
		"lfs.gguf":    []byte("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n"),
		"page.gguf":   []byte("<!DOCTYPE html><html><body>Hugging Face</body></html>"),
		"model.onnx":  {0x08, 0x07, 0x12, 0x04, 't', 'o', 'r', 'c'},
		"config.json": []byte(`{"architectures":["LlamaForCausalLM"]}`),
	}
	out := map[string]string{}
	for name, data := range files {
		out[name] = filepath.Join(dir, name)
		writeFile(t, out[name], data)
	}
	peft := filepath.Join(dir, "my-lora")
	for _, d := range []string{peft, filepath.Join(dir, "downloads"), filepath.Join(dir, "hf")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(peft, peftConfigFile), []byte(`{"peft_type":"LORA"}`))
	writeFile(t, filepath.Join(peft, peftWeightsFile), st)
	out["peft"], out["peft weights"] = peft, filepath.Join(peft, peftWeightsFile)
	hf := filepath.Join(dir, "hf")
	writeHFDir(t, hf, small, 1)
	out["hf"] = hf
	out["dir of gguf"] = filepath.Join(dir, "downloads")
	writeFile(t, filepath.Join(out["dir of gguf"], "m.gguf"), model)
	out["empty dir"] = filepath.Join(dir, "nothing")
	if err := os.Mkdir(out["empty dir"], 0o700); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSniff(t *testing.T) {
	paths := wrongFiles(t, t.TempDir())
	for name, want := range map[string]Kind{
		"model.gguf": KindGGUF, "lora.gguf": KindGGUF, "truncated.gguf": KindGGUF, "story.bin": KindLlama2C,
		"empty.bin": KindEmpty, "random.bin": KindUnknown, "notes.txt": KindText, "config.json": KindText,
		"pytorch_model.bin": KindZip, "pickle.pt": KindPickle, "model.safetensors": KindSafetensors,
		"model.onnx": KindONNX, "lfs.gguf": KindLFSPointer, "page.gguf": KindHTML,
		"peft": KindPEFTDir, "peft weights": KindSafetensors, "hf": KindHFDir, "dir of gguf": KindDir, "empty dir": KindDir,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Sniff(paths[name])
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("Sniff(%s) = %v, want %v", name, got, want)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		_, err := Sniff(filepath.Join(t.TempDir(), "absent"))
		if !errors.Is(err, ErrNotExist) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Sniff(absent) error %v, want ErrNotExist and fs.ErrNotExist", err)
		}
	})
}

// TestOpenRefusesWhatIsNotAModel: every mistaken path fails with the
// sentinel a caller acts on and a message that says what the path is and,
// unless it is an adapter, what Kiln loads.
func TestOpenRefusesWhatIsNotAModel(t *testing.T) {
	paths := wrongFiles(t, t.TempDir())
	for _, tc := range []struct {
		name string
		is   error
		want string
	}{
		{"lora.gguf", ErrAdapter, "is a LoRA adapter (a LoRA GGUF: general.type adapter), not a model"},
		{"peft", ErrAdapter, "is a LoRA adapter (a PEFT directory: adapter_config.json), not a model"},
		{"peft weights", ErrAdapter, "is a LoRA adapter (PEFT weights"},
		{"random.bin", ErrNotModel, "is not a model format Kiln recognises; Kiln loads " + Accepted},
		{"notes.txt", ErrNotModel, "is a text file, not a model"},
		{"config.json", ErrNotModel, "a model's configuration, not its weights: pass its directory"},
		{"pytorch_model.bin", ErrNotModel, "is a zip archive (a PyTorch .bin or .pt checkpoint?)"},
		{"pickle.pt", ErrNotModel, "is a Python pickle"},
		{"model.safetensors", ErrNotModel, "is a lone safetensors file: pass the Hugging Face model directory"},
		{"model.onnx", ErrNotModel, "is an ONNX model"},
		{"lfs.gguf", ErrNotModel, "named .gguf but does not start with the GGUF magic: a Git LFS pointer"},
		{"page.gguf", ErrNotModel, "an HTML page"},
		{"empty.bin", ErrFormat, "is empty: 0 bytes"},
		{"truncated.gguf", ErrFormat, "truncated.gguf"},
		{"dir of gguf", ErrNotModel, "a directory without config.json, so not a Hugging Face model directory"},
		{"empty dir", ErrNotModel, "is an empty directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Open(paths[tc.name])
			if err == nil {
				_ = l.Close()
				t.Fatalf("Open(%s) loaded a model", tc.name)
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open(%s) error %q, want %v containing %q", tc.name, err, tc.is, tc.want)
			}
			if strings.Contains(err.Error(), "out of range") {
				t.Errorf("Open(%s) read the file as a llama2.c header: %v", tc.name, err)
			}
		})
	}
	var nm *NotModelError
	if _, err := Open(paths["pytorch_model.bin"]); !errors.As(err, &nm) || nm.Kind != KindZip {
		t.Errorf("Open(zip) error %v, want a *NotModelError of kind zip", err)
	}
}

// TestOpenRefusesReferenceAdapters: the project's reference LoRA, in both
// layouts, is refused as a model.
func TestOpenRefusesReferenceAdapters(t *testing.T) {
	dir := refDir(t)
	for _, name := range []string{"tiny-llama.lora-r8.F32.gguf", "tiny-llama.lora-r8.peft"} {
		if _, err := Open(filepath.Join(dir, name)); !errors.Is(err, ErrAdapter) {
			t.Errorf("Open(%s) error %v, want ErrAdapter", name, err)
		}
	}
}

// TestOpenReportsWhatItLoaded: the facts a server reports at start-up.
func TestOpenReportsWhatItLoaded(t *testing.T) {
	paths := wrongFiles(t, t.TempDir())
	type facts struct {
		Format        string
		File, Mapped  bool
		Own, Context  int
		Types         map[string]int
		ParamsMatches bool
	}
	for _, tc := range []struct {
		spec string
		want facts
	}{
		{TinyID, facts{FormatEmbedded, false, false, 2048, 2048, map[string]int{"f32": 57}, true}},
		{paths["model.gguf"], facts{FormatGGUF, true, true, 32, 32, map[string]int{"f32": 20}, true}},
		{paths["q8.gguf"], facts{FormatGGUF, true, true, 32, 32, map[string]int{"f32": 5, "q8_0": 15}, true}},
		{paths["story.bin"], facts{FormatLlama2C, true, false, 32, 32, map[string]int{"f32": 20}, true}},
	} {
		t.Run(filepath.Base(tc.spec), func(t *testing.T) {
			l, err := Open(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = l.Close() }()
			m := l.Model
			got := facts{l.Format, l.FileBytes > 0, l.MappedBytes > 0, m.OwnContext(), m.Config.SeqLen, m.WeightTypes(),
				m.Params() > 0 && m.WeightBytes() >= 4*int64(m.Config.Dim)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("capped context", func(t *testing.T) {
		l, err := OpenWith(paths["model.gguf"], OpenOptions{Context: 16})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }()
		if got := [2]int{l.Model.OwnContext(), l.Model.Config.SeqLen}; got != [2]int{32, 16} {
			t.Errorf("(own, effective) context = %v, want [32 16]", got)
		}
	})
}

// FuzzSniff: sniffBytes never panics, a GGUF magic is always GGUF, and
// what it calls a llama2.c checkpoint always has a header the loader
// accepts.
func FuzzSniff(f *testing.F) {
	small, err := NewRandom(Config{Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 40, SeqLen: 32}, 9, false)
	if err != nil {
		f.Fatal(err)
	}
	ckpt, err := WriteLlama2C(nil, small)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ckpt[:sniffLen], int64(len(ckpt)), ".bin")
	f.Add(ggufBytes(f, small, kernels.F32, nil)[:64], int64(4096), ".gguf")
	for _, s := range []string{"", "PK\x03\x04", "\x80\x02", "<html>", "version https://git-lfs.github.com/spec/v1\n", "{\"a\":1}", "hello world"} {
		f.Add([]byte(s), int64(len(s)), ".bin")
	}
	f.Add([]byte{0x08, 0x07, 0x12}, int64(3), ".onnx")
	f.Fuzz(func(t *testing.T, head []byte, size int64, ext string) {
		if len(head) > sniffLen {
			head = head[:sniffLen]
		}
		size = max(size, int64(len(head)))
		k := sniffBytes(head, size, ext)
		if k != sniffBytes(head, size, ext) {
			t.Fatal("sniffBytes is not deterministic")
		}
		if bytes.HasPrefix(head, []byte("GGUF")) && k != KindGGUF {
			t.Errorf("GGUF magic sniffed as %v", k)
		}
		if k == KindLlama2C {
			if _, _, err := parseLlama2CHeader(head); err != nil {
				t.Errorf("sniffed llama2.c but the header fails: %v", err)
			}
		}
		if k == KindEmpty && size != 0 {
			t.Errorf("%d bytes sniffed empty", size)
		}
	})
}
