package schemas

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Files holds the schema documents and the trace contract.
//
//go:embed kiln-inference-v1.schema.json kiln-observability-v1.schema.json trace-contract.md
var files embed.FS

// File names inside FS.
const (
	InferenceFile     = "kiln-inference-v1.schema.json"
	ObservabilityFile = "kiln-observability-v1.schema.json"
	TraceContractFile = "trace-contract.md"
)

// Schema ids ($id); a definition is addressed as ID + "#/$defs/<name>".
const (
	InferenceID     = "https://kiln.dev/schemas/kiln-inference-v1.schema.json"
	ObservabilityID = "https://kiln.dev/schemas/kiln-observability-v1.schema.json"
)

// FS returns the embedded files (read-only).
func FS() fs.FS { return files }

// Inference returns a copy of the inference schema document.
func Inference() []byte { return mustRead(InferenceFile) }

// Observability returns a copy of the observability schema document.
func Observability() []byte { return mustRead(ObservabilityFile) }

// TraceContract returns the trace contract document (Markdown).
func TraceContract() []byte { return mustRead(TraceContractFile) }

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("schemas: embedded %s missing: %v", name, err)) // a build defect, not input
	}
	return b
}

// Validator validates JSON documents against the definitions of both
// schemas. It is safe for concurrent use once built.
type Validator struct {
	c *jsonschema.Compiler
}

// NewValidator compiles both schema documents.
func NewValidator() (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for id, name := range map[string]string{InferenceID: InferenceFile, ObservabilityID: ObservabilityFile} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustRead(name)))
		if err != nil {
			return nil, fmt.Errorf("schemas: parse %s: %w", name, err)
		}
		if err := c.AddResource(id, doc); err != nil {
			return nil, fmt.Errorf("schemas: add %s: %w", name, err)
		}
	}
	return &Validator{c: c}, nil
}

// Validate checks the JSON document data against definition def of the
// schema id (InferenceID or ObservabilityID), e.g.
// Validate(ObservabilityID, "health", body).
func (v *Validator) Validate(id, def string, data []byte) error {
	sch, err := v.c.Compile(id + "#/$defs/" + def)
	if err != nil {
		return fmt.Errorf("schemas: compile %s#%s: %w", id, def, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("schemas: instance is not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("schemas: %s: %w", def, err)
	}
	return nil
}
