//go:build !unix

package tokenizer

func processCPU() int64 { return 0 }
