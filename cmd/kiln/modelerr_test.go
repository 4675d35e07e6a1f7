package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/internal/testshared"
)

// TestNearTiny: the names a user types for the embedded model, and some
// that are not it.
func TestNearTiny(t *testing.T) {
	for spec, want := range map[string]bool{
		"kiln_tiny": true, "kilntiny": true, "kiln-tiney": true, "tiny": true, "Kiln-Tiny.gguf": true, "./kiln tiny": true,
		"llama-7b.gguf": false, "models/qwen2": false, "tinyllama.gguf": false,
	} {
		if got := nearTiny(spec); got != want {
			t.Errorf("nearTiny(%q) = %v, want %v", spec, got, want)
		}
	}
}

// TestWrongModelCLI: kiln serve and kiln generate given a path that is not
// a model exit 1 with one line on stderr that says what the path is and
// what to do instead, and never read it as a llama2.c checkpoint.
func TestWrongModelCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	random := make([]byte, 1024)
	for i := range random {
		random[i] = byte(i*7919 + i>>3)
	}
	peft := filepath.Dir(write("my-lora/adapter_config.json", []byte(`{"peft_type":"LORA"}`)))
	cases := []struct {
		name, model string
		want        map[string]string // per subcommand, in stderr
	}{
		{"misspelt tiny", "kiln_tiny", all("kiln_tiny does not exist; did you mean kiln-tiny (the embedded model)?")},
		{"missing", filepath.Join(dir, "absent.gguf"), all("absent.gguf does not exist (Kiln loads " + llama.Accepted + ")")},
		{"random bytes", write("weights.bin", random), all("is not a model format Kiln recognises; Kiln loads " + llama.Accepted)},
		{"text", write("README.md", []byte("# my model\n")), all("README.md is a text file, not a model")},
		{"zip", write("pytorch_model.bin", []byte("PK\x03\x04rest")), all("is a zip archive (a PyTorch .bin or .pt checkpoint?)")},
		{"directory", filepath.Dir(write("stuff/notes.txt", []byte("x"))), all("a directory without config.json")},
		{"peft", peft, map[string]string{
			"serve":    "my-lora is a LoRA adapter (a PEFT directory: adapter_config.json), not a model; put it in --adapter-dir",
			"generate": "my-lora is a LoRA adapter (a PEFT directory: adapter_config.json), not a model; pass it with --adapter",
		}},
	}
	ref, err := testshared.Path("models", "ref")
	switch {
	case err != nil && os.Getenv("CI") != "":
		t.Fatalf("reference models absent (%v); CI always has ../shared", err)
	case err != nil:
		t.Logf("the LoRA GGUF case is left out: reference models absent (%v)", err)
	default:
		cases = append(cases, struct {
			name, model string
			want        map[string]string
		}{"lora gguf", filepath.Join(ref, "tiny-llama.lora-r8.F32.gguf"), map[string]string{
			"serve":    "is a LoRA adapter (a LoRA GGUF: general.type adapter), not a model; put it in --adapter-dir",
			"generate": "is a LoRA adapter (a LoRA GGUF: general.type adapter), not a model; pass it with --adapter",
		}})
	}
	for _, tc := range cases {
		for _, sub := range []string{"serve", "generate"} {
			t.Run(tc.name+"/"+sub, func(t *testing.T) {
				args := []string{sub, "--model", tc.model, "--prompt", "hi"}
				if sub == "serve" {
					args = []string{sub, "--model", tc.model, "--addr", "127.0.0.1:0"}
				}
				code, stdout, stderr := runKiln(t, args...)
				msg := strings.TrimSpace(stderr)
				if code != exitFail || stdout != "" || strings.Contains(msg, "\n") {
					t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, one line on stderr", code, stdout, stderr)
				}
				if !strings.HasPrefix(msg, "kiln: "+sub+": --model: ") || !strings.Contains(msg, tc.want[sub]) {
					t.Errorf("stderr %q, want %q after \"kiln: %s: --model: \"", msg, tc.want[sub], sub)
				}
				if strings.Contains(msg, "out of range") {
					t.Errorf("stderr %q: the file was read as a llama2.c checkpoint", msg)
				}
			})
		}
	}
}

// all is the same expected text for both subcommands.
func all(s string) map[string]string { return map[string]string{"serve": s, "generate": s} }
