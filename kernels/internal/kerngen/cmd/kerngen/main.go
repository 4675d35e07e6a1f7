// Command kerngen writes kerngen's generated files into the current
// directory (go generate runs it in kernels/).
package main

import (
	"log"
	"os"

	"github.com/kiln-ai/kiln/kernels/internal/kerngen"
)

func main() {
	files, err := kerngen.Generate()
	if err != nil {
		log.Fatal(err)
	}
	for name, src := range files {
		if err := os.WriteFile(name, src, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
