package llama

import "github.com/kiln-ai/kiln/kernels"

// tensorSource is a loader's view of a checkpoint: a matrix or a vector by
// name, checked against the shape the configuration expects. GGUF files
// and Hugging Face directories each provide one.
type tensorSource interface {
	matrix(name string, rows, cols int) (kernels.Matrix, error)
	vector(name string, n int) ([]float32, error)
	// array reads a tensor of any rank as float32, shape in row-major
	// order (Hugging Face's; GGUF's ne reversed).
	array(name string, shape ...int) ([]float32, error)
}

var (
	_ tensorSource = (*ggufLoader)(nil)
	_ tensorSource = (*hfTensors)(nil)
)

// layerNames are the names of one decoder block's tensors in a checkpoint
// format, relative to the block's prefix ("blk.N." or "model.layers.N.").
// Matrices name the weight without its ".weight" suffix, so that the bias
// of a projection is the same name plus ".bias".
type layerNames struct {
	q, k, v, o, gate, down, up string
	attnNorm, ffnNorm          string
	qNorm, kNorm               string
	lin                        linearNames // a hybrid's Gated DeltaNet layers
}

var (
	ggufLayerNames = layerNames{
		q: "attn_q", k: "attn_k", v: "attn_v", o: "attn_output",
		gate: "ffn_gate", down: "ffn_down", up: "ffn_up",
		attnNorm: "attn_norm", ffnNorm: "ffn_norm",
		qNorm: "attn_q_norm", kNorm: "attn_k_norm",
		lin: ggufLinearNames,
	}
	hfLayerNames = layerNames{
		q: "self_attn.q_proj", k: "self_attn.k_proj", v: "self_attn.v_proj", o: "self_attn.o_proj",
		gate: "mlp.gate_proj", down: "mlp.down_proj", up: "mlp.up_proj",
		attnNorm: "input_layernorm", ffnNorm: "post_attention_layernorm",
		qNorm: "self_attn.q_norm", kNorm: "self_attn.k_norm",
		lin: hfLinearNames,
	}
)

// ggufNames are the layer tensor names of a GGUF file of shape c: a
// hybrid's (qwen35) name its feed-forward norm post_attention_norm
// (ATTN_POST_NORM).
func ggufNames(c Config) layerNames {
	n := ggufLayerNames
	if c.Hybrid() {
		n.ffnNorm = "post_attention_norm"
	}
	return n
}

// readLayer reads decoder block i with prefix p from src: the seven
// projections (a Gated DeltaNet mixer's instead of the attention's four in
// a hybrid's linear layers), the two norms, and the Q/K/V biases and
// per-head Q/K norms when the configuration has them.
func readLayer(src tensorSource, n layerNames, l *Layer, i int, p string, c Config) error {
	d, kv, h, q := c.Dim, c.KVDim(), c.HiddenDim, c.QDim()
	var err error
	mats := []struct {
		name       string
		dst        *kernels.Matrix
		rows, cols int
	}{
		{n.q, &l.WQ, c.QProjDim(), d}, {n.k, &l.WK, kv, d}, {n.v, &l.WV, kv, d}, {n.o, &l.WO, d, q},
		{n.gate, &l.W1, h, d}, {n.down, &l.W2, d, h}, {n.up, &l.W3, h, d},
	}
	linear := c.IsLinear(i)
	if linear {
		if l.Lin, err = readLinear(src, n.lin, p, c); err != nil {
			return err
		}
		mats = mats[4:]
	}
	for _, t := range mats {
		if *t.dst, err = src.matrix(p+t.name+".weight", t.rows, t.cols); err != nil {
			return err
		}
	}
	type vec struct {
		name string
		dst  *[]float32
		n    int
	}
	vecs := []vec{{n.attnNorm + ".weight", &l.AttnNorm, d}, {n.ffnNorm + ".weight", &l.FFNNorm, d}}
	if c.QKVBias && !linear {
		vecs = append(vecs, vec{n.q + ".bias", &l.BQ, q}, vec{n.k + ".bias", &l.BK, kv}, vec{n.v + ".bias", &l.BV, kv})
	}
	if c.QKNorm && !linear {
		vecs = append(vecs, vec{n.qNorm + ".weight", &l.QNorm, c.HeadDim()}, vec{n.kNorm + ".weight", &l.KNorm, c.HeadDim()})
	}
	for _, v := range vecs {
		if *v.dst, err = src.vector(p+v.name, v.n); err != nil {
			return err
		}
	}
	return nil
}
