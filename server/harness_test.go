package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/kernels"
	"github.com/kiln-ai/kiln/telemetry"
)

type llamaRow = llama.Row

// hookBackend wraps the real model state so a test can run code at the
// start of a forward step (to make one slow on purpose, or to hold the
// actor), without changing what the model computes.
type hookBackend struct {
	engine.Backend
	mu           sync.Mutex
	before       func(rows []llama.Row)
	seqLen       int           // > 0: the context the engine sees (shorter than the model's)
	reclaimPause time.Duration // slept by Reclaim before the real one (maintenance_test.go)
	cost         time.Duration // slept by every Forward: its duration under fake time (withFakeTime)
}

func (h *hookBackend) SeqLen() int {
	if h.seqLen > 0 {
		return h.seqLen
	}
	return h.Backend.SeqLen()
}

func (h *hookBackend) Forward(rows []llama.Row, logits [][]float32) {
	h.mu.Lock()
	f := h.before
	h.mu.Unlock()
	if f != nil {
		f(rows)
	}
	if h.cost > 0 {
		time.Sleep(h.cost)
	}
	h.Backend.Forward(rows, logits)
}

// SetAdapter passes an adapter swap on to the model state.
func (h *hookBackend) SetAdapter(a *llama.Adapter) { h.Backend.(*llama.State).SetAdapter(a) }

// holdDecode holds the actor inside the nth decode step (one row past a
// prompt; n counts from 1), device ownership held shared, from when it
// closes entered until the test closes gate.
func (h *harness) holdDecode(n int) (entered, gate chan struct{}) {
	entered, gate = make(chan struct{}), make(chan struct{})
	decodes := 0 // only the actor calls Forward
	h.backend.setBefore(func(rows []llama.Row) {
		if len(rows) == 1 && rows[0].Logits && rows[0].Pos > 0 {
			if decodes++; decodes == n {
				close(entered)
				<-gate
			}
		}
	})
	return entered, gate
}

func (h *hookBackend) setBefore(f func(rows []llama.Row)) {
	h.mu.Lock()
	h.before = f
	h.mu.Unlock()
}

// harness is a real server (real model, real engine, real telemetry)
// behind a real HTTP listener.
type harness struct {
	t       testing.TB
	cfg     Config
	model   *llama.Loaded
	backend *hookBackend
	eng     *engine.Engine
	tel     *telemetry.Telemetry
	srv     *Server
	ts      *httptest.Server
	spans   *tracetest.InMemoryExporter // set by withSpans
	// stepHook, when set, runs inside every training slice's exclusive
	// hold: a slow step on demand.
	stepHook atomic.Pointer[func()]
	// unitCost, when set, runs after each unit of a training step with its
	// estimated work: under fake time, the unit's duration.
	unitCost atomic.Pointer[func(work int64)]
}

// setStepHook makes every training slice run f inside its hold.
func (h *harness) setStepHook(f func()) { h.stepHook.Store(&f) }

// setUnitCost makes every unit of a training step run f with its work.
func (h *harness) setUnitCost(f func(work int64)) { h.unitCost.Store(&f) }

// harnessSetup is what options change before the harness is built.
type harnessSetup struct {
	cfg    Config
	seqLen int
	topts  []telemetry.Option
	eopts  []engine.Option
	spans  *tracetest.InMemoryExporter
	wrap   func(net.Listener) net.Listener // wraps the test server's listener
	gen    func(generator) generator       // wraps the engine the server submits to (a test double's seam)
	model  string                          // the model spec; "" is kiln-tiny
	// fakeTime serves over in-memory pipes (withFakeTime).
	fakeTime bool
}

type harnessOption func(*harnessSetup)

func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	// Telemetry's log (operation lines) is quiet unless a test asks for it.
	setup := harnessSetup{cfg: DefaultConfig(), topts: []telemetry.Option{telemetry.WithLogOutput(io.Discard, false)}}
	setup.cfg.Engine.EvictGrace = 5 * time.Second
	// httptest.NewRequest sends Host example.com to the handler; the
	// Host check (hosts.go) has tests of its own.
	setup.cfg.AllowedHosts = []string{"example.com"}
	for _, o := range opts {
		o(&setup)
	}
	cfg, topts := setup.cfg, setup.topts
	if cfg.KernelPath == "" {
		cfg.KernelPath = kernels.Path() // as cmd resolves them
	}
	cfg.KernelPaths, cfg.CPUFeatures = kernels.Paths(), kernels.CPUFeatures()
	spec := setup.model
	if spec == "" {
		spec = "kiln-tiny"
	}
	model, err := llama.Open(spec)
	if err != nil {
		t.Fatalf("open %s: %v", spec, err)
	}
	t.Cleanup(func() { _ = model.Close() })
	workers := 2
	if setup.fakeTime {
		// A pool worker polls a while before it parks, timing the poll by
		// the clock: under fake time it would poll for ever.
		workers = 1
	}
	pool := kernels.NewPool(workers)
	t.Cleanup(pool.Close)
	h := &harness{t: t, cfg: cfg, model: model, spans: setup.spans, backend: &hookBackend{Backend: model.Model.NewState(4, pool), seqLen: setup.seqLen}}
	h.tel, err = telemetry.New(telemetry.Config{}, topts...)
	if err != nil {
		t.Fatalf("telemetry: %v", err)
	}
	t.Cleanup(func() {
		if err := h.tel.Shutdown(context.Background()); err != nil {
			t.Errorf("telemetry shutdown: %v", err)
		}
	})
	h.eng, err = engine.New(h.backend, cfg.Engine, append(setup.eopts, engine.WithAdapters(), engine.WithObserver(h.tel))...)
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	if err := h.eng.Start(context.Background()); err != nil {
		t.Fatalf("engine start: %v", err)
	}
	t.Cleanup(func() {
		if err := h.eng.Shutdown(context.Background()); err != nil {
			t.Errorf("engine shutdown: %v", err)
		}
	})
	nop := zerolog.Nop()
	adapters := lora.NewRegistry(cfg.AdapterDir, model.Model, cfg.AdapterCacheBytes)
	runner := train.NewRunner(train.RunnerConfig{Engine: h.eng, Model: model.Model, Pool: pool, Adapters: adapters,
		ModelID: model.ID, Slice: cfg.MaintenanceSlice, StepHook: func() {
			if f := h.stepHook.Load(); f != nil {
				(*f)()
			}
		}, UnitCost: func(work int64) {
			if f := h.unitCost.Load(); f != nil {
				(*f)(work)
			}
		}})
	t.Cleanup(runner.Stop)
	deps := Deps{Model: model, Engine: h.eng, Telemetry: h.tel, Logger: &nop, Training: runner, Adapters: adapters}
	if setup.gen != nil {
		deps.gen = setup.gen(engineGenerator{h.eng})
	}
	h.srv, err = New(cfg, deps)
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	h.ts = httptest.NewUnstartedServer(h.srv.Handler())
	if setup.fakeTime {
		h.backend.cost = fakeForward
		_ = h.ts.Listener.Close()
		pipes := newPipeListener()
		h.ts.Listener = pipes
		h.ts.Start()
		h.ts.Client().Transport.(*http.Transport).DialContext = pipes.dial
		t.Cleanup(h.ts.Close)
		return h
	}
	if setup.wrap != nil {
		h.ts.Listener = setup.wrap(h.ts.Listener)
	}
	h.ts.Start()
	t.Cleanup(h.ts.Close)
	return h
}

// chatBody is a small request to the served model.
// loopbackServer is a second Server over the harness's model, engine and
// telemetry, configured as the harness is but listening on a free loopback
// port once started: for tests of Start and Shutdown.
func (h *harness) loopbackServer(t *testing.T) *Server {
	t.Helper()
	cfg := h.cfg
	cfg.Addr = "127.0.0.1:0"
	srv, err := New(cfg, Deps{Model: h.model, Engine: h.eng, Telemetry: h.tel, Logger: h.srv.logger()})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func (h *harness) chatBody(extra map[string]any) map[string]any {
	b := map[string]any{
		"model":       h.model.ID,
		"messages":    []map[string]any{{"role": "user", "content": "Tell me about the sun."}},
		"max_tokens":  6,
		"temperature": 0,
	}
	return withFields(b, extra)
}

// withFields sets extra's fields on a request body b; a nil value
// removes the field.
func withFields(b, extra map[string]any) map[string]any {
	for k, v := range extra {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

// do sends a request and returns the status, headers and whole body.
func (h *harness) do(method, path string, body any, hdr map[string]string) (int, http.Header, []byte) {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, h.ts.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.ts.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, out
}

// getJSON fetches path and decodes a 200 JSON body.
func (h *harness) getJSON(path string, v any) []byte {
	h.t.Helper()
	status, _, body := h.do(http.MethodGet, path, nil, nil)
	if status != http.StatusOK {
		h.t.Fatalf("GET %s: %d %s", path, status, body)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			h.t.Fatalf("GET %s: %v in %s", path, err, body)
		}
	}
	return body
}

// sseRecords splits an SSE body into its data payloads, checking the
// framing: every record is exactly "data: <payload>" then a blank line.
func sseRecords(t testing.TB, body []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		if expectBlank {
			if line != "" {
				t.Fatalf("SSE record not followed by a blank line: %q", line)
			}
			expectBlank = false
			continue
		}
		payload, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("SSE line %q is not a data record", line)
		}
		out = append(out, payload)
		expectBlank = true
	}
	if expectBlank {
		t.Fatal("SSE body does not end with a blank line")
	}
	return out
}

// streamParts classifies a stream's records.
type streamParts struct {
	chunks   []map[string]any // chat.completion.chunk objects, in order
	events   []map[string]any // kiln.token_timing objects, in order
	order    []string         // "content", "timing", "finish", "usage"
	raw      []json.RawMessage
	done     bool
	terminal map[string]any // the chunk with a finish_reason
}

func parseStream(t testing.TB, body []byte) streamParts {
	t.Helper()
	var p streamParts
	recs := sseRecords(t, body)
	for i, r := range recs {
		if r == "[DONE]" {
			if i != len(recs)-1 {
				t.Fatalf("[DONE] at record %d of %d", i, len(recs))
			}
			p.done = true
			continue
		}
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(r))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("record %d %q: %v", i, r, err)
		}
		p.raw = append(p.raw, json.RawMessage(r))
		switch m["object"] {
		case "kiln.token_timing":
			p.events = append(p.events, m)
			p.order = append(p.order, "timing")
		case "chat.completion.chunk", "text_completion":
			p.chunks = append(p.chunks, m)
			choices, _ := m["choices"].([]any)
			switch {
			case len(choices) == 0:
				p.order = append(p.order, "usage")
			case choices[0].(map[string]any)["finish_reason"] != nil:
				p.order = append(p.order, "finish")
				p.terminal = m
			default:
				p.order = append(p.order, "content")
			}
		default:
			t.Fatalf("record %d has object %v", i, m["object"])
		}
	}
	if !p.done {
		t.Fatal("stream did not end with data: [DONE]")
	}
	return p
}

// content concatenates the streamed content.
func (p *streamParts) content() string {
	var b strings.Builder
	for _, c := range p.chunks {
		choices, _ := c["choices"].([]any)
		if len(choices) == 0 {
			continue
		}
		delta, _ := choices[0].(map[string]any)["delta"].(map[string]any)
		if s, ok := delta["content"].(string); ok {
			b.WriteString(s)
		}
		if s, ok := choices[0].(map[string]any)["text"].(string); ok {
			b.WriteString(s) // a legacy text_completion
		}
	}
	return b.String()
}

func num(t testing.TB, v any) float64 {
	t.Helper()
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			t.Fatal(err)
		}
		return f
	case float64:
		return n
	}
	t.Fatalf("%v (%T) is not a number", v, v)
	return 0
}
