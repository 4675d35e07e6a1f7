package llama

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kiln-ai/kiln/kernels"
)

// ErrAdapterLayout marks an adapter that cannot be loaded because of its
// files: bad JSON, a bad safetensors or GGUF file, a GGUF that is not a
// LoRA adapter, missing tensors, shapes that do not fit the base model.
// Every such load error wraps it, and its message names the file and the
// tensor or key.
var ErrAdapterLayout = errors.New("llama: adapter layout invalid")

// AdapterInfo describes an adapter on disk without a base model.
type AdapterInfo struct {
	Format  string   // "peft" (directory) or "gguf" (file)
	Rank    int      // r
	Alpha   float64  // lora_alpha; the scale is Alpha/Rank (Alpha/sqrt(Rank) with PEFT's use_rslora)
	Targets []string // GGUF tensor kinds it targets, in the order attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down, attn_qkv, attn_gate, ssm_out
	Arch    string   // GGUF general.architecture, or "" for PEFT
	Bytes   int64    // size of the weights file
	SHA256  string   // hex sha256 of the weights file (adapter_model.safetensors or the .gguf)
}

// Adapter is a LoRA adapter loaded for one Model: per layer and targeted
// projection, A (r x in) and B (out x r) in float32, already in the row
// and column order of the base model's weights (adapter_order.go). It is
// read-only once
// loaded, so any number of States of its Model may share it.
type Adapter struct {
	Info AdapterInfo

	model  *Model
	scale  float32                  // alpha / r
	layers [][numLoraKinds]loraPair // per layer; a pair with no rows is not targeted
	maxOut int                      // widest targeted output, for the State's scratch
}

// loraPair is one projection's low-rank update, B·A.
type loraPair struct {
	a, b kernels.Matrix // a: r x in, b: out x r, both F32
}

// loraKind is a projection an adapter may target, in the order of
// AdapterInfo.Targets; Forward's fused products use consecutive kinds
// (q, k, v and gate, up).
type loraKind uint8

const (
	loraQ loraKind = iota
	loraK
	loraV
	loraO
	loraGate
	loraUp
	loraDown
	// A hybrid's Gated DeltaNet projections: in_proj_qkv and in_proj_z
	// (consecutive: one fused product), out_proj.
	loraLinQKV
	loraLinZ
	loraLinOut
	numLoraKinds
)

// loraGGUFNames are the GGUF tensor kinds of the projections;
// loraPEFTModules their Hugging Face module names (PEFT target_modules).
var (
	loraGGUFNames   = [numLoraKinds]string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down", "attn_qkv", "attn_gate", "ssm_out"}
	loraPEFTModules = [numLoraKinds]string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "in_proj_qkv", "in_proj_z", "out_proj"}
)

// base returns the base model's weight matrix of kind k in layer l, nil
// when the layer has none: the attention kinds on a Gated DeltaNet layer,
// the Gated DeltaNet kinds on any other.
func (k loraKind) base(l *Layer) *kernels.Matrix {
	if d := l.Lin; d != nil {
		return [numLoraKinds]*kernels.Matrix{nil, nil, nil, nil, &l.W1, &l.W3, &l.W2, &d.WQKV, &d.WZ, &d.WOut}[k]
	}
	return [numLoraKinds]*kernels.Matrix{&l.WQ, &l.WK, &l.WV, &l.WO, &l.W1, &l.W3, &l.W2}[k]
}

// InspectAdapter describes the adapter at path (a PEFT directory or a LoRA
// GGUF file) from its configuration or metadata, hashing its weights file;
// it loads no weights and needs no base model.
func InspectAdapter(path string) (AdapterInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return AdapterInfo{}, fmt.Errorf("llama: adapter: %w", err)
	}
	if st.IsDir() {
		return inspectPEFT(path)
	}
	return inspectGGUFAdapter(path)
}

// LoadAdapter loads the adapter at path (a PEFT directory or a LoRA GGUF
// file) for m, checking every tensor's shape against m's projections.
// Weights are converted to float32 and reordered where the adapter's
// layout differs from m's: a llama's Q/K rows, a hybrid's value heads
// (adapter_order.go). A tensor of a projection its layer lacks (q_proj on
// a Gated DeltaNet layer, in_proj_qkv on a full-attention one) is an
// error. A file
// problem wraps ErrAdapterLayout and names the file and the tensor.
// LoadAdapter only reads m, so it may run while States of m run Forward
// (a server reads the weights before its barrier and only switches inside
// it). The adapter holds no file open.
func LoadAdapter(path string, m *Model) (*Adapter, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("llama: adapter: %w", err)
	}
	if st.IsDir() {
		return loadPEFT(path, m, false)
	}
	return loadGGUFAdapter(path, m, false)
}

// CheckAdapter reports whether the adapter at path fits m: nil, or the
// error LoadAdapter would return, found from the files' headers and
// shapes without converting any weights (every tensor's presence, shape
// and type is checked as LoadAdapter checks it).
func CheckAdapter(path string, m *Model) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("llama: adapter: %w", err)
	}
	if st.IsDir() {
		_, err = loadPEFT(path, m, true)
	} else {
		_, err = loadGGUFAdapter(path, m, true)
	}
	return err
}

// Scale is the factor of the low-rank term: alpha / r (alpha / sqrt(r) for
// a PEFT adapter with use_rslora).
func (a *Adapter) Scale() float32 { return a.scale }

// Model is the model the adapter was loaded for.
func (a *Adapter) Model() *Model { return a.model }

// MemBytes is the memory its weights hold: every A and B in float32.
func (a *Adapter) MemBytes() int64 {
	var n int64
	for _, l := range a.layers {
		for _, p := range l {
			n += int64(p.a.Bytes() + p.b.Bytes())
		}
	}
	return n
}

// newAdapter makes an empty adapter for m; the loaders fill its pairs with
// set and finish with done.
func newAdapter(m *Model, info AdapterInfo) *Adapter {
	return &Adapter{Info: info, model: m, layers: make([][numLoraKinds]loraPair, m.Config.Layers)}
}

// set stores the pair of (layer, kind) after checking its shapes with
// check.
func (a *Adapter) set(file string, layer int, k loraKind, ma, mb kernels.Matrix, nameA, nameB string) error {
	if err := a.check(file, layer, k, ma.Rows, ma.Cols, mb.Rows, mb.Cols, nameA, nameB); err != nil {
		return err
	}
	a.layers[layer][k] = loraPair{a: ma, b: mb}
	a.maxOut = max(a.maxOut, mb.Rows)
	return nil
}

// check checks the shapes of a pair against the base projection of
// (layer, kind), which the layer must have: A is r x in, B is out x r.
// nameA and nameB are the tensors' names in file, for the error.
func (a *Adapter) check(file string, layer int, k loraKind, rowsA, colsA, rowsB, colsB int, nameA, nameB string) error {
	w := k.base(&a.model.Layers[layer])
	if w == nil {
		return a.absent(file, layer, k, nameA)
	}
	r := a.Info.Rank
	if rowsA != r || colsA != w.Cols {
		return fmt.Errorf("%w: %s: tensor %s is %dx%d, want %dx%d (rank x the input width of %s)",
			ErrAdapterLayout, file, nameA, rowsA, colsA, r, w.Cols, loraGGUFNames[k])
	}
	if rowsB != w.Rows || colsB != r {
		return fmt.Errorf("%w: %s: tensor %s is %dx%d, want %dx%d (the output width of %s x rank)",
			ErrAdapterLayout, file, nameB, rowsB, colsB, w.Rows, r, loraGGUFNames[k])
	}
	return nil
}

// absent is the error of tensor name, which targets kind k in a layer that
// has no such projection.
func (a *Adapter) absent(file string, layer int, k loraKind, name string) error {
	what := "a full-attention layer"
	if a.model.Config.IsLinear(layer) {
		what = "a Gated DeltaNet (linear attention) layer"
	}
	if !a.model.Config.Hybrid() {
		what = "an attention layer"
	}
	return fmt.Errorf("%w: %s: tensor %s targets %s (%s), but layer %d of the base model is %s, which has none",
		ErrAdapterLayout, file, name, loraGGUFNames[k], loraPEFTModules[k], layer, what)
}

// done checks that every targeted kind is present in every layer that has
// its projection and fills Info.Targets and the scale.
func (a *Adapter) done(file string, name func(layer int, k loraKind) string) error {
	a.Info.Targets = a.Info.Targets[:0]
	for k := range numLoraKinds {
		n := 0
		for l := range a.layers {
			if a.layers[l][k].a.Rows > 0 {
				n++
			}
		}
		if n == 0 {
			continue
		}
		for l := range a.layers {
			if a.layers[l][k].a.Rows == 0 && k.base(&a.model.Layers[l]) != nil {
				return fmt.Errorf("%w: %s: tensor %s missing (the adapter targets %s in other layers)",
					ErrAdapterLayout, file, name(l, k), loraGGUFNames[k])
			}
		}
		a.Info.Targets = append(a.Info.Targets, loraGGUFNames[k])
	}
	if len(a.Info.Targets) == 0 {
		return fmt.Errorf("%w: %s: no LoRA tensors", ErrAdapterLayout, file)
	}
	a.scale = float32(a.Info.Alpha / float64(a.Info.Rank))
	return nil
}

// hashFile returns the size and hex sha256 of the file at path.
func hashFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", fmt.Errorf("llama: adapter: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("llama: adapter: read %s: %w", path, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// targetsOf lists the kinds named in order, for AdapterInfo.Targets.
func targetsOf(on [numLoraKinds]bool) []string {
	var out []string
	for k, ok := range on {
		if ok {
			out = append(out, loraGGUFNames[k])
		}
	}
	return out
}

// f32Matrix makes a rows x cols float32 matrix over v.
func f32Matrix(rows, cols int, v []float32) kernels.Matrix {
	return kernels.Matrix{Type: kernels.F32, Rows: rows, Cols: cols, F32: v}
}

// splitLoraName splits a GGUF LoRA tensor name "blk.N.KIND.weight.lora_a"
// into its layer, kind and side ('a' or 'b').
func splitLoraName(name string) (layer int, k loraKind, side byte, ok bool) {
	rest, found := strings.CutPrefix(name, "blk.")
	if !found {
		return 0, 0, 0, false
	}
	var kind string
	switch {
	case strings.HasSuffix(rest, ".weight.lora_a"):
		side, rest = 'a', strings.TrimSuffix(rest, ".weight.lora_a")
	case strings.HasSuffix(rest, ".weight.lora_b"):
		side, rest = 'b', strings.TrimSuffix(rest, ".weight.lora_b")
	default:
		return 0, 0, 0, false
	}
	num, kind, found := strings.Cut(rest, ".")
	if !found {
		return 0, 0, 0, false
	}
	layer, ok = parseLayerIndex(num)
	if !ok {
		return 0, 0, 0, false
	}
	for i, n := range loraGGUFNames {
		if n == kind {
			return layer, loraKind(i), side, true
		}
	}
	return 0, 0, 0, false
}

// parseLayerIndex parses a decimal layer number without sign or leading
// zeros, bounded so that it cannot overflow.
func parseLayerIndex(s string) (int, bool) {
	if s == "" || len(s) > 7 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
