// Package tokenizer turns text into token ids and back: a SentencePiece-style
// vocabulary with byte fallback, byte-level BPE with merges and a
// pre-tokenizer split (from GGUF or a Hugging Face tokenizer.json), special
// tokens, and a streaming decoder that holds back incomplete UTF-8.
package tokenizer
