package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/grammar"
	"github.com/kiln-ai/kiln/engine/toolcall"
	"github.com/kiln-ai/kiln/server/wire"
)

// Constrained decoding: a JSON response format and a forced tool call
// hold the output to a grammar (engine/grammar), and tools under auto
// hold each call to one once the model opens it (a lazy grammar). The
// grammar is compiled before the request starts, from the server's cache
// when a request repeated the schema or the tools; each choice runs its
// own matcher, whose mask time is on the request's clock (the sampling
// phase) and in its performance metadata.

// Constraint kinds, a closed set (metadata.performance.constraint.kind
// and the kiln.grammar.kind span attribute).
const (
	constraintJSONObject   = "json_object"
	constraintJSONSchema   = "json_schema"
	constraintToolRequired = "tool_required"
	constraintToolNamed    = "tool_named"
	constraintToolAuto     = "tool_auto"
)

// grammarCacheSize is how many compiled grammars the server keeps.
const grammarCacheSize = 32

// requestGrammar is a request's compiled grammar and what compiling it
// cost.
type requestGrammar struct {
	kind       string
	g          *grammar.Grammar
	start, end time.Time
	cacheHit   bool
}

func (rg *requestGrammar) compileMs() float64 {
	return float64(rg.end.Sub(rg.start).Microseconds()) / 1000
}

// grammarVocab is the tokenizer's vocabulary as grammars read it, built
// on the first constrained request.
func (s *Server) grammarVocab() *grammar.Vocab {
	s.vocabOnce.Do(func() {
		s.vocab = grammar.NewVocab(s.tok.VocabSize(), s.tok.Piece, s.stopIDs)
	})
	return s.vocab
}

// planGrammar compiles the grammar the request's agent fields call for,
// nil when none does. thinking says the prompt opened a think section.
func (s *Server) planGrammar(req *wire.Request, thinking bool) (*requestGrammar, error) {
	a := &req.Agent
	lim := grammar.DefaultLimits()
	var (
		kind  string
		build func(v *grammar.Vocab) (*grammar.Grammar, error)
	)
	tools := a.ToolcallTools()
	switch {
	case a.Format.Type == "json_object" || a.Format.Type == "json_schema":
		kind = a.Format.Type
		build = func(v *grammar.Vocab) (*grammar.Grammar, error) {
			doc, err := formatExpr(a.Format, lim)
			if err != nil {
				return nil, err
			}
			if a.ToolsOffered() {
				// Under auto with a response format, the output is a call
				// or the document.
				call, err := toolcall.CallExpr(s.family, tools, lim)
				if err != nil {
					return nil, err
				}
				doc = grammar.Alt(doc, grammar.Seq(grammar.Lit(s.family.Openers()[0]), call))
			}
			return grammar.Compile(v, doc, lim)
		}
	case !a.ToolsOffered():
		return nil, nil
	case a.ToolChoice == wire.ToolChoiceRequired || a.ToolChoice == wire.ToolChoiceNamed:
		kind = constraintToolRequired
		parallel := a.Parallel
		if a.ToolChoice == wire.ToolChoiceNamed {
			kind, parallel = constraintToolNamed, false
			tools = namedTool(tools, a.ToolChoiceName)
		}
		build = func(v *grammar.Vocab) (*grammar.Grammar, error) {
			x, err := toolcall.RequiredExpr(s.family, tools, parallel, thinking, lim)
			if err != nil {
				return nil, err
			}
			return grammar.Compile(v, x, lim)
		}
	default:
		kind = constraintToolAuto
		build = func(v *grammar.Vocab) (*grammar.Grammar, error) {
			call, err := toolcall.CallExpr(s.family, tools, lim)
			if err != nil {
				return nil, err
			}
			return grammar.CompileLazy(v, grammar.Lazy{
				Triggers: s.family.Openers()[:1],
				After:    []*grammar.Expr{call},
				Once:     !a.Parallel,
			}, lim)
		}
	}
	rg := &requestGrammar{kind: kind, start: s.clock.Now()}
	v := s.grammarVocab()
	g, hit, err := s.grammars.Get(grammarKey(kind, s.family, thinking, a), func() (*grammar.Grammar, error) { return build(v) })
	rg.end = s.clock.Now()
	if err != nil {
		return nil, grammarError(err, req)
	}
	rg.g, rg.cacheHit = g, hit
	return rg, nil
}

// formatExpr is the grammar of a JSON response format's document.
func formatExpr(f wire.ResponseFormat, lim grammar.Limits) (*grammar.Expr, error) {
	if f.Type == "json_object" || len(f.Schema) == 0 {
		return grammar.AnyJSONObject(lim.MaxAnyDepth), nil
	}
	return grammar.Schema(f.Schema, lim)
}

func namedTool(tools []toolcall.Tool, name string) []toolcall.Tool {
	for _, t := range tools {
		if t.Name == name {
			return []toolcall.Tool{t}
		}
	}
	return nil
}

// grammarKey files a grammar under everything it was compiled from:
// the kind, the model's call family, the think section, the tools and
// the schema (the server serves one tokenizer).
func grammarKey(kind string, f toolcall.Family, thinking bool, a *wire.AgentFields) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%t\x00%t\x00%s\x00%s\x00", kind, f, thinking, a.Parallel, a.ToolChoice, a.ToolChoiceName)
	if a.ToolsOffered() {
		for _, t := range a.Tools {
			fmt.Fprintf(h, "%s\x00%d:%s\x00", t.Name, len(t.Parameters), t.Parameters)
		}
	}
	h.Write(a.Format.Schema)
	return hex.EncodeToString(h.Sum(nil))
}

// grammarError is the 400 for a schema or tool list that cannot be
// compiled: the parameter that holds it, the keyword and the reason.
func grammarError(err error, req *wire.Request) error {
	param := formatParams[req.API]
	var te *toolcall.ToolError
	if errors.As(err, &te) {
		param = "tools[" + strconv.Itoa(toolIndex(&req.Agent, te.Index)) + "]" + toolSchemaParams[req.API]
	}
	var le *grammar.LimitError
	if errors.As(err, &le) {
		return wire.Invalid(param, "schema_too_complex", "'%s' is too complex to enforce: %v", param, le)
	}
	var se *grammar.SchemaError
	if errors.As(err, &se) {
		return wire.Invalid(param, "unsupported_schema", "'%s' cannot be enforced: %v", param, se)
	}
	return fmt.Errorf("compile grammar: %w", err)
}

// toolIndex maps an index among the tools compiled back to the request's
// tools (a named tool_choice compiles one).
func toolIndex(a *wire.AgentFields, i int) int {
	if a.ToolChoice == wire.ToolChoiceNamed {
		for j, t := range a.Tools {
			if t.Name == a.ToolChoiceName {
				return j
			}
		}
	}
	return i
}

// choiceConstraint is one choice's matcher as the engine runs it: it
// clocks each mask. The engine's actor calls Mask and Accept; the
// handler reads the totals after the generation ended.
type choiceConstraint struct {
	m      *grammar.Matcher
	clock  engine.Clock
	maskNs atomic.Int64
}

var _ engine.Constraint = (*choiceConstraint)(nil)

func (c *choiceConstraint) Mask(logits []float32, remaining int) {
	t0 := c.clock.Now()
	c.m.Mask(logits, remaining)
	c.maskNs.Add(int64(c.clock.Now().Sub(t0)))
}

func (c *choiceConstraint) Accept(id int) error { return c.m.Accept(id) }

// constraintUse is the report of the choice's constraint at its end,
// nil without one. A document is truncated when the generation ended by
// length with it incomplete: possible only when even its shortest
// completion did not fit the budget.
func (x *exchange) constraintUse(finish string) *wire.ConstraintUse {
	rg, c := x.req.grammar, x.constr
	if rg == nil || c == nil {
		return nil
	}
	incomplete := !c.m.Done()
	if rg.g.Lazy() {
		incomplete = c.m.Active()
	}
	return &wire.ConstraintUse{
		Kind:      rg.kind,
		CompileMs: rg.compileMs(),
		CacheHit:  rg.cacheHit,
		MaskMs:    float64(c.maskNs.Load()/1000) / 1000,
		Forced:    c.m.Forced(),
		Truncated: finish == "length" && incomplete,
	}
}

// newConstraint is a choice's matcher, nil without a grammar.
func (s *Server) newConstraint(req *job) *choiceConstraint {
	if req.grammar == nil {
		return nil
	}
	return &choiceConstraint{m: req.grammar.g.NewMatcher(), clock: s.clock}
}
