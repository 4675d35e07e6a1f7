// Package tokenizer turns text into token ids and back, for the tokenizers
// that GGUF files and Hugging Face tokenizer.json files carry:
//
//   - SentencePiece-style vocabularies (GGUF tokenizer.ggml.model "llama":
//     Llama 2, TinyLlama, Phi-3): spaces become "▁", a "▁" is prefixed,
//     adjacent pieces merge by score, and what no piece covers falls back to
//     <0xXX> byte tokens (spm.go).
//   - Byte-level BPE (GGUF "gpt2", tokenizer.json BPE: GPT-2, Llama 3,
//     Qwen2/3, SmolLM): a pre-tokenizer split (pretokenize.go, the models'
//     regular expressions written out by hand because Go's regexp has no
//     lookahead), then merges by rank over the byte alphabet (bpe.go,
//     bytelevel.go).
//   - English, the embedded vocabulary of real English words with byte
//     fallback that the built-in default model uses (english.go).
//
// Segmentation reproduces llama.cpp's for GGUF vocabularies and Hugging
// Face's for tokenizer.json (testdata and the project's shared test data hold the
// references). Control tokens (BOS, EOS, chat markers) are recognised in
// text only by EncodeSpecial, and by EncodeTemplated only outside the
// spans of a rendered prompt that hold message contents (templated.go);
// user-defined tokens always are. Decode renders
// every token; a streaming Decoder holds back incomplete UTF-8 and gives
// control tokens no text. Detokenize adds the space clean-up of the
// reference whole-sequence decoders (llama.cpp's clean_spaces,
// transformers' clean_up_tokenization_spaces) where the data asks for it.
//
// FromHFDir reads a Hugging Face model directory's tokenizer: tokenizer.json
// plus the special tokens, BOS policy and chat template of
// tokenizer_config.json (or chat_template.jinja) and the end-of-sequence
// ids of generation_config.json (hfdir.go).
//
// A Tokenizer is immutable once built and safe for concurrent use; Encode
// borrows scratch buffers from a sync.Pool. A Decoder belongs to one
// generation. The package starts no goroutines.
package tokenizer
