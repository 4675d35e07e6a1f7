package toolcall

import (
	"fmt"

	"github.com/kiln-ai/kiln/engine/grammar"
)

// The grammars of calls, for constrained decoding: what a family writes
// for one call, byte for byte as its chat template shows the model, with
// the arguments held to each tool's JSON Schema.

// ToolError is a tool whose parameters cannot be compiled to a grammar.
type ToolError struct {
	Index int // in the tools given
	Err   error
}

func (e *ToolError) Error() string { return fmt.Sprintf("tool %d: %v", e.Index, e.Err) }

func (e *ToolError) Unwrap() error { return e.Err }

// CallExpr is the grammar of one call of one of tools in family f, from
// just after the family's opener (Openers()[0]) to the end of the call.
func CallExpr(f Family, tools []Tool, lim grammar.Limits) (*grammar.Expr, error) {
	alts := make([]*grammar.Expr, 0, len(tools))
	for i, t := range tools {
		x, err := callOf(f, t, lim)
		if err != nil {
			return nil, &ToolError{Index: i, Err: err}
		}
		alts = append(alts, x)
	}
	return grammar.Alt(alts...), nil
}

// RequiredExpr is the grammar of output that is only calls of tools: one,
// or with parallel one or more, after the rest of a think section when
// the prompt opened one.
func RequiredExpr(f Family, tools []Tool, parallel, thinking bool, lim grammar.Limits) (*grammar.Expr, error) {
	after, err := CallExpr(f, tools, lim)
	if err != nil {
		return nil, err
	}
	call := grammar.Seq(grammar.Lit(f.Openers()[0]), after)
	sep := grammar.Lit("\n")
	if f == Llama3 {
		sep = grammar.Lit("; ")
	}
	calls := call
	if parallel {
		calls = grammar.List(call, sep, 1, -1)
	}
	if !thinking {
		return calls, nil
	}
	// The think section runs to </think>; it may not hold '<', so that
	// it cannot open a call the parser would read as reasoning.
	thought := grammar.Star(grammar.Class(grammar.Range{Lo: 0, Hi: '<' - 1}, grammar.Range{Lo: '<' + 1, Hi: 255}))
	return grammar.Seq(thought, grammar.Lit(thinkClose), grammar.Repeat(grammar.Byte('\n'), 0, 2), calls), nil
}

func callOf(f Family, t Tool, lim grammar.Limits) (*grammar.Expr, error) {
	name := `"` + t.Name + `"` // names are letters, digits, '_' and '-'
	switch f {
	case QwenXML:
		return xmlCallOf(t, lim)
	case Llama3:
		args, err := argsOf(t, lim)
		if err != nil {
			return nil, err
		}
		// After the opener {"name".
		return grammar.Seq(grammar.Lit(`: `+name+`, "parameters": `), args, grammar.Lit("}")), nil
	}
	args, err := argsOf(t, lim)
	if err != nil {
		return nil, err
	}
	return grammar.Seq(grammar.Lit("\n{\"name\": "+name+", \"arguments\": "), args, grammar.Lit("}\n"+toolCallClose)), nil
}

// argsOf is the grammar of a tool's JSON arguments: {} for a tool
// without parameters.
func argsOf(t Tool, lim grammar.Limits) (*grammar.Expr, error) {
	if len(t.Parameters) == 0 {
		return grammar.Lit("{}"), nil
	}
	return grammar.Schema(t.Parameters, lim)
}

// xmlCallOf is a QwenXML call after <tool_call>: the function, then each
// parameter in the schema's order, string values as raw text and others
// as JSON.
func xmlCallOf(t Tool, lim grammar.Limits) (*grammar.Expr, error) {
	props, err := grammar.SchemaObject(t.Parameters, lim)
	if err != nil {
		return nil, err
	}
	ms := make([]grammar.Member, len(props))
	for i, p := range props {
		v := p.Value
		if p.Raw != nil {
			v = p.Raw
		}
		ms[i] = grammar.Member{
			X:        grammar.Seq(grammar.Lit(paramOpen+p.Name+">\n"), v, grammar.Lit("\n"+paramClose+"\n")),
			Required: p.Required,
		}
	}
	return grammar.Seq(
		grammar.Lit("\n"+functionOpen+t.Name+">\n"),
		grammar.Members(grammar.Empty(), ms),
		grammar.Lit(functionClose+"\n"+toolCallClose),
	), nil
}
