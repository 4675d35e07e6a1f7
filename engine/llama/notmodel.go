package llama

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Accepted names what Open loads, for the errors that refuse anything else.
const Accepted = "kiln-tiny (embedded), a GGUF file, a Hugging Face model directory, or a llama2.c checkpoint"

// Errors of a model path that is not a model, for a caller to act on
// (errors.Is): the command line adds the flag that takes an adapter.
var (
	// ErrNotExist: nothing at the path. The error is also fs.ErrNotExist.
	ErrNotExist = errors.New("llama: model path does not exist")
	// ErrAdapter: the path is a LoRA adapter (a PEFT directory or a LoRA
	// GGUF), which applies to a model and is not one.
	ErrAdapter = errors.New("llama: a LoRA adapter, not a model")
	// ErrNotModel: the path is a file or directory of a kind Open does not
	// load (NotModelError says which). It is also ErrFormat.
	ErrNotModel = errors.New("llama: not a model Kiln loads")
)

// NotModelError refuses a path by what it holds.
type NotModelError struct {
	Path string
	Kind Kind   // what Sniff found
	What string // what the path is, for a person ("a zip archive (a PyTorch .bin or .pt checkpoint?)")
}

func (e *NotModelError) Error() string {
	return fmt.Sprintf("%s is %s; Kiln loads %s", e.Path, e.What, Accepted)
}

// Unwrap makes the error both ErrNotModel and ErrFormat.
func (e *NotModelError) Unwrap() []error { return []error{ErrNotModel, ErrFormat} }

// notExistError is ErrNotExist and fs.ErrNotExist, naming the path.
type notExistError struct{ path string }

func (e notExistError) Error() string { return e.path + " does not exist" }

func (e notExistError) Is(target error) bool {
	return target == ErrNotExist || target == fs.ErrNotExist
}

// adapterError is ErrAdapter, naming the path.
type adapterError struct{ path, form string }

func (e adapterError) Error() string {
	return fmt.Sprintf("%s is a LoRA adapter (%s), not a model", e.path, e.form)
}

func (e adapterError) Unwrap() error { return ErrAdapter }

// refuse is the error for path of kind k, which Open does not load as a
// model; nil for the kinds it loads.
func refuse(path string, k Kind) error {
	base := strings.ToLower(filepath.Base(path))
	var what string
	switch k {
	case KindGGUF, KindLlama2C, KindHFDir:
		return nil
	case KindPEFTDir:
		return adapterError{path, "a PEFT directory: " + peftConfigFile}
	case KindEmpty:
		what = "empty: 0 bytes (a truncated or failed download?)"
	case KindZip:
		what = "a zip archive (a PyTorch .bin or .pt checkpoint?), which Kiln does not read: use the model's safetensors directory or a GGUF conversion"
	case KindPickle:
		what = "a Python pickle (a legacy PyTorch checkpoint?), which Kiln does not read: use the model's safetensors directory or a GGUF conversion"
	case KindONNX:
		what = "an ONNX model, which Kiln does not read"
	case KindSafetensors:
		if base == peftWeightsFile {
			return adapterError{path, "PEFT weights: pass the directory that holds it and " + peftConfigFile}
		}
		what = "a lone safetensors file: pass the Hugging Face model directory that holds it with config.json and tokenizer.json"
	case KindLFSPointer:
		what = "a Git LFS pointer, not the file it stands for (run git lfs pull, or download the file itself)"
	case KindHTML:
		what = "an HTML page, not a model (a download of the web page? on Hugging Face, download through the /resolve/ address)"
	case KindText:
		what = textWhat(path, base)
		if base == peftConfigFile {
			return adapterError{path, "its PEFT configuration: pass the directory that holds it"}
		}
	case KindDir:
		what = dirWhat(path)
	default:
		what = "not a model format Kiln recognises"
	}
	if k != KindGGUF && strings.HasSuffix(base, ".gguf") && k != KindEmpty {
		what = "named .gguf but does not start with the GGUF magic: " + what
	}
	return &NotModelError{Path: path, Kind: k, What: what}
}

// textWhat describes a text file given as a model.
func textWhat(path, base string) string {
	switch {
	case base == "config.json":
		return fmt.Sprintf("a model's configuration, not its weights: pass its directory, %s", filepath.Dir(path))
	case strings.HasSuffix(base, ".json"):
		return "a JSON file, not a model"
	}
	return "a text file, not a model"
}

// dirWhat describes a directory that is neither a Hugging Face model nor a
// PEFT adapter: what it lacks, and a file in it that would load.
func dirWhat(dir string) string {
	what := "a directory without config.json, so not a Hugging Face model directory (nor a PEFT adapter: no " + peftConfigFile + ")"
	if g, _ := filepath.Glob(filepath.Join(dir, "*.gguf")); len(g) > 0 {
		return what + fmt.Sprintf("; it holds %s: pass that file", g[0])
	}
	if s, _ := filepath.Glob(filepath.Join(dir, "*.safetensors")); len(s) > 0 {
		return what + "; it holds safetensors weights: add the model's config.json and tokenizer.json beside them"
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) == 0 {
		return "an empty directory"
	}
	return what
}
