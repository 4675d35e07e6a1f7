module github.com/kiln-ai/kiln/collector

go 1.26.8
