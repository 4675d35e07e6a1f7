package train

import (
	"math"
)

// Optimizer kinds.
const (
	AdamW = "adam_w"
	SGD   = "sgd"
)

// OptimizerConfig chooses the update rule. Zero fields of an AdamW config
// take PyTorch's defaults (beta1 0.9, beta2 0.999, eps 1e-8); weight decay
// zero means none.
type OptimizerConfig struct {
	Kind        string  `json:"kind"`
	Beta1       float64 `json:"beta1,omitempty"`
	Beta2       float64 `json:"beta2,omitempty"`
	Eps         float64 `json:"eps,omitempty"`
	WeightDecay float64 `json:"weight_decay,omitempty"`
}

// withDefaults fills the AdamW defaults.
func (o OptimizerConfig) withDefaults() OptimizerConfig {
	if o.Kind == "" {
		o.Kind = AdamW
	}
	if o.Kind == AdamW {
		if o.Beta1 == 0 {
			o.Beta1 = 0.9
		}
		if o.Beta2 == 0 {
			o.Beta2 = 0.999
		}
		if o.Eps == 0 {
			o.Eps = 1e-8
		}
	}
	return o
}

// Validate names the first field out of range as a *FieldError, its
// Field relative to the optimizer object ("beta1").
func (o OptimizerConfig) Validate() error {
	o = o.withDefaults()
	switch {
	case o.Kind != AdamW && o.Kind != SGD:
		return fieldErr("kind", "%q unknown (want adam_w or sgd)", o.Kind)
	case o.Beta1 < 0 || o.Beta1 >= 1:
		return fieldErr("beta1", "%g out of range [0, 1)", o.Beta1)
	case o.Beta2 < 0 || o.Beta2 >= 1:
		return fieldErr("beta2", "%g out of range [0, 1)", o.Beta2)
	case o.Eps < 0:
		return fieldErr("eps", "%g is negative", o.Eps)
	case o.WeightDecay < 0:
		return fieldErr("weight_decay", "%g is negative", o.WeightDecay)
	}
	return nil
}

// optimizer updates parameters from their gradients, slice by slice in a
// fixed order (weights.each), with a constant learning rate.
type optimizer interface {
	step(params, grads [][]float32, lr float64)
}

func newOptimizer(o OptimizerConfig, params [][]float32) optimizer {
	o = o.withDefaults()
	if o.Kind == SGD {
		return sgd{}
	}
	a := &adamW{cfg: o}
	for _, p := range params {
		a.m = append(a.m, make([]float32, len(p)))
		a.v = append(a.v, make([]float32, len(p)))
	}
	return a
}

// sgd is plain gradient descent: p -= lr·g.
type sgd struct{}

func (sgd) step(params, grads [][]float32, lr float64) {
	for i, p := range params {
		axpy(float32(-lr), grads[i], p)
	}
}

// adamW is Adam with decoupled weight decay (Loshchilov and Hutter), as
// torch.optim.AdamW: p -= lr·wd·p, then p -= lr·m̂/(sqrt(v̂)+eps) with
// bias-corrected moments.
type adamW struct {
	cfg  OptimizerConfig
	t    int
	m, v [][]float32
}

func (a *adamW) step(params, grads [][]float32, lr float64) {
	a.t++
	b1, b2 := a.cfg.Beta1, a.cfg.Beta2
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := 1 - math.Pow(b2, float64(a.t))
	decay := float32(1 - lr*a.cfg.WeightDecay)
	for i, p := range params {
		g, m, v := grads[i], a.m[i], a.v[i]
		for j := range p {
			gj := float64(g[j])
			mj := b1*float64(m[j]) + (1-b1)*gj
			vj := b2*float64(v[j]) + (1-b2)*gj*gj
			m[j], v[j] = float32(mj), float32(vj)
			upd := lr * (mj / c1) / (math.Sqrt(vj/c2) + a.cfg.Eps)
			p[j] = p[j]*decay - float32(upd)
		}
	}
}
