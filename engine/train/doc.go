// Package train is Kiln's online LoRA trainer: a float32 training forward
// pass over one conversation that keeps the activations the backward pass
// needs, the backward pass that computes the gradients of the LoRA A and B
// matrices on the targeted projections (the base weights frozen and used as
// they are served: quantized matrices are read through the kernels,
// dequantized row by row, never requantized), the AdamW and SGD optimizers,
// the epoch loop of a supervised fine-tuning job, and the writer of the
// adapter in the PEFT layout that llama.LoadAdapter reads back.
//
// The loss is the cross-entropy of the assistant tokens only, after the
// model's chat template (Encode renders a conversation as inference does
// and marks which tokens the assistant wrote). One conversation is one
// microbatch is one optimizer step.
//
// Hybrids (Qwen3.5): a Gated DeltaNet layer trains LoRA on its mixer's
// in_proj_qkv, in_proj_z and out_proj (modules qkv, z, out) and on its
// feed-forward; a gated attention layer on q (queries and gates), k, v, o
// and its feed-forward. Each layer has only its own kinds' pairs.
//
// Memory: the activations kept for one step grow linearly with the number
// of tokens (attention probabilities are recomputed in the backward pass
// from each row's log-sum-exp, logits are computed a chunk of rows at a
// time, and the delta rule's state is kept once every deltaBlock tokens and
// recomputed a block at a time in the backward pass), so a step is bounded
// by the context length (ActivationBytes).
//
// Slicing: a step is planned as units (the embedding, row chunks of each
// layer's forward, chunks of the classifier's target rows, row chunks of
// each layer's three backward phases, the optimizer update; a linear
// layer's delta rule runs backward in time, one checkpoint block a unit,
// the last first) that keep all
// their state in the activations, so a StepRun can run it a slice of wall
// time at a time and a caller holding the device for each slice releases
// it in between (Begin, StepRun.Next; RunOptions.Slice). The plan depends
// only on the model, the targets and the sequence's length, never on the
// budget, and Step is one unbudgeted slice: a sliced step computes the
// same loss, gradient and update bit for bit.
//
// The forward and backward code is generic over float32 (the trainer) and
// float64 (the reference path the gradient-check tests compare against
// finite differences). A Trainer belongs to one goroutine at a time; its
// products and attention run on the kernels.Pool it was given, and every
// call returns when all its parts are done, so the package starts no
// goroutine of its own.
package train
