// Command randgguf writes a random-weight GGUF model of a TinyStories shape
// (stories15M or stories110M: Llama architecture, 32000-token vocabulary)
// or of Qwen2.5-0.5B's shape (qwen2 architecture, 151,936-token
// vocabulary) with a SentencePiece-style vocabulary and the ChatML
// template, so that both kiln and llama.cpp's tools (llama-bench,
// llama-server, llama-quantize) can load and serve the same file.
// scripts/bench-peer and scripts/bench-chat use it to measure kiln side by
// side with llama.cpp.
//
//	go run ./scripts/randgguf --shape 110M --type q8_0 --out s110-q8_0.gguf
//	go run ./scripts/randgguf --shape qwen2.5-0.5b --type f16 --out q05.gguf
//
// The weights come from llama.NewRandom with a fixed seed, so a given
// (shape, type, seed) always gives the same bytes. The vocabulary is built
// from kiln-tiny's English word list (see Vocab); it exists only so that
// text prompts tokenize to about one token per word in both servers, and
// so that every token a random model emits is visible text.
package main
