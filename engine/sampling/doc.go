// Package sampling chooses each token from a request's logits: the
// OpenAI-style parameters and their ranges (Params, Params.Validate), the
// logit adjustments (logit_bias, repetition, frequency and presence
// penalties, min_p), and the draw itself: softmax at the temperature over
// every id or the top k, the nucleus cut, and a seeded draw.
//
// The files follow the pipeline: params.go (what a request may ask),
// penalties.go (adjust the logits), softmax.go (weights, through the one
// exponential in kernels), topk.go, nucleus.go (the top_p cut by a radix
// select), draw.go, and sampler.go, which runs them in that order.
//
// A Sampler belongs to one request and is used from one goroutine (the
// engine's actor); it owns its random source and scratch, so after the
// first token it allocates nothing, and a seeded request draws the same
// tokens whatever else is batched with it.
package sampling
