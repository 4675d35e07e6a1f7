package tokenizer

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// benchPrompt is about 4 KB of varied chat-like text.
var benchPrompt = func() string {
	parts := []string{
		"You are a helpful assistant. Explain why the 99th percentile of inter-token latency matters for streaming chat, ",
		"and what a pause of 250 ms looks like to a reader. Include code: for (int i = 0; i < n; i++) { sum += a[i]; }\n",
		"Numbers 1234567890, naïve café, 日本語のテキスト, emoji 😀🎉, URLs https://example.com/a?b=c&d=e.\n\n",
		"I'm sure you're right; they'll see the difference when the batch grows and prefill chunks interleave with decode.\n",
	}
	var b strings.Builder
	for i := 0; b.Len() < 4096; i++ {
		b.WriteString(parts[i%len(parts)])
	}
	return b.String()[:4096]
}()

func benchTokenizers(b *testing.B) map[string]*Tokenizer {
	set := map[string]*Tokenizer{"english": English()}
	if dir := sharedPath("tokenizers/gguf"); dir != "" {
		set["phi3-spm"] = openGGUFTokenizer(b, filepath.Join(dir, "ggml-vocab-phi-3.gguf"))
		set["gpt2-bpe"] = openGGUFTokenizer(b, filepath.Join(dir, "ggml-vocab-gpt-2.gguf"))
	}
	if sharedPath("tokenizers/qwen3") != "" {
		set["qwen3-bpe"] = loadQwen3(b)
	}
	return set
}

// BenchmarkEncode4KB encodes a 4 KB prompt.
func BenchmarkEncode4KB(b *testing.B) {
	for name, tok := range benchTokenizers(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(benchPrompt)))
			runtime.GC() // settle the garbage of loading the vocabularies
			cpu := processCPU()
			for b.Loop() {
				tok.EncodeSpecial(benchPrompt)
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkEncodeLongWord encodes 64 KB without a word break, the worst
// case for merging (a quadratic merge loop would show here).
func BenchmarkEncodeLongWord(b *testing.B) {
	text := strings.Repeat("abcdefghij", 6554)[:65536]
	for name, tok := range benchTokenizers(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			runtime.GC() // settle the garbage of loading the vocabularies
			cpu := processCPU()
			for b.Loop() {
				tok.Encode(text)
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkDecoderNext streams the tokens of the prompt back to text.
func BenchmarkDecoderNext(b *testing.B) {
	for name, tok := range benchTokenizers(b) {
		ids := tok.Encode(benchPrompt)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := tok.NewDecoder()
				for _, id := range ids {
					d.Next(id)
				}
				d.Flush()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/token")
		})
	}
}

// reportCPU adds the process CPU time per operation since start, which the
// other work on a shared machine disturbs less than ns/op.
func reportCPU(b *testing.B, start int64) {
	if end := processCPU(); end > start {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}
