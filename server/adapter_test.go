package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/schemas"
	"github.com/kiln-ai/kiln/server/openai"
	"github.com/kiln-ai/kiln/telemetry"
)

// adapterCase is one kind of request of the mixing test.
type adapterCase struct {
	name    string
	adapter any // the request's adapter field; absent when nil
	weights string
	used    string
}

// TestAdapterRequestsNeverMix: over real HTTP with the real engine and
// the reference LoRA, base requests and requests naming the adapter (GGUF
// and PEFT layouts) run concurrently; each gets exactly the greedy tokens
// of its request alone with its weights, computed without the engine (so
// no forward mixed adapters mid-stream), with adapter_used and the
// revision header naming what it ran with.
func TestAdapterRequestsNeverMix(t *testing.T) {
	ref := refDir(t)
	dir := adapterDir(t, ref)
	h := newHarness(t, withAdapterModel(ref, dir))
	m := h.model.Model
	cases := []adapterCase{
		{"base (absent)", nil, "", "base"},
		{"lora", "lora", "lora.gguf", "lora"},
		{"base (null)", json.RawMessage("null"), "", "base"},
		{"peft", "peft", "peft", "peft"},
		{"base (empty)", "", "", "base"},
		{"lora again", "lora", "lora.gguf", "lora"},
	}
	const n = 12
	body := func(c adapterCase) map[string]any {
		b := h.chatBody(map[string]any{"stream": true, "include_performance": true, "max_tokens": n})
		if c.adapter != nil {
			b["adapter"] = c.adapter
		}
		return b
	}
	req, err := openai.ParseChat([]byte(mustJSON(t, body(cases[0]))))
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := h.srv.promptIDs(req)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{}
	revision := map[string]string{"": "base"}
	for _, c := range cases {
		if _, ok := want[c.weights]; ok {
			continue
		}
		var a *llama.Adapter
		if c.weights != "" {
			if a, err = llama.LoadAdapter(filepath.Join(dir, c.weights), m); err != nil {
				t.Fatal(err)
			}
			revision[c.weights] = a.Info.SHA256
		}
		want[c.weights] = greedyRef(t, m, a, prompt, n, h.srv.stopIDs)
	}
	if cmp.Equal(want[""], want["lora.gguf"]) {
		t.Fatalf("the adapter does not change the greedy tokens %v: the test could not tell them apart", want[""])
	}

	results := make([]<-chan []byte, len(cases))
	for i, c := range cases {
		_, results[i] = h.streamAsync(body(c))
	}
	for i, c := range cases {
		raw := <-results[i]
		p := parseStream(t, raw)
		if d := cmp.Diff(want[c.weights], streamedIDs(t, p)); d != "" {
			t.Errorf("%s: tokens (-alone with its weights +served):\n%s", c.name, d)
		}
		if got := perfOf(t, p.terminal)["adapter_used"]; got != c.used {
			t.Errorf("%s: adapter_used %v, want %s", c.name, got, c.used)
		}
	}
	for _, c := range cases[:2] {
		status, hdr, _ := h.do(http.MethodPost, chatPath, body(c), nil)
		if status != http.StatusOK || hdr.Get(revisionHeader) != revision[c.weights] {
			t.Errorf("%s: status %d, %s %q, want 200 %q", c.name, status, revisionHeader, hdr.Get(revisionHeader), revision[c.weights])
		}
	}
}

// TestAdapterSwapChargedAndLinked: a request queued behind an adapter
// swap (a base stream is active when it arrives, so the swap waits for it
// to drain) has adapter_ms, and its chat span links to the exported
// kiln.adapter_swap span; the active stream is charged nothing; the swap
// is a root span with from/to; /health, /v1/config and the label-free
// adapter gauges report the adapter now loaded.
func TestAdapterSwapChargedAndLinked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ref := refDir(t)
		exp := tracetest.NewInMemoryExporter()
		h := newHarness(t, withAdapterModel(ref, adapterDir(t, ref)), withSpans(exp), withFakeTime())
		first, baseRes := h.streamAsync(h.chatBody(map[string]any{"stream": true, "include_performance": true, "max_tokens": 48}))
		<-first
		_, loraRes := h.streamAsync(h.chatBody(map[string]any{"stream": true, "include_performance": true, "max_tokens": 4, "adapter": "lora"}))
		base, lora := parseStream(t, <-baseRes), parseStream(t, <-loraRes)
		phase := func(p streamParts) any {
			return perfOf(t, p.terminal)["latency"].(map[string]any)["phases"].(map[string]any)["adapter_ms"]
		}
		if v := phase(base); v != nil {
			t.Errorf("the active base stream was charged adapter_ms %v", v)
		}
		ms, ok := phase(lora).(json.Number)
		if !ok {
			t.Fatalf("the request queued behind the swap has adapter_ms %v, want a number", phase(lora))
		}
		if v, _ := ms.Float64(); v <= 0 {
			t.Errorf("adapter_ms %v, want > 0", v)
		}
		// Measured, so never "not applicable" in its diagnosis.
		checkNotApplicableUnmeasured(t, h, lora.terminal["id"].(string))

		spans := waitSpans(t, exp, telemetry.SpanAdapterSwap)
		var swap tracetest.SpanStub
		for _, s := range spans {
			if s.Name == telemetry.SpanAdapterSwap {
				swap = s
			}
		}
		if swap.Parent.IsValid() {
			t.Error("kiln.adapter_swap is not a root span")
		}
		attrs := map[string]string{}
		for _, a := range swap.Attributes {
			attrs[string(a.Key)] = a.Value.String()
		}
		for k, v := range map[string]string{telemetry.AttrAdapterFrom: "base", telemetry.AttrAdapterTo: "lora", telemetry.AttrMaintenanceReason: "request"} {
			if attrs[k] != v {
				t.Errorf("swap span %s = %q, want %q", k, attrs[k], v)
			}
		}
		wait, err := strconv.ParseFloat(attrs[telemetry.AttrAdapterWaitMs], 64)
		if err != nil || wait <= 0 {
			t.Errorf("swap span wait_ms %q, want > 0 (the base stream drained first)", attrs[telemetry.AttrAdapterWaitMs])
		}
		if d := float64(swap.EndTime.Sub(swap.StartTime)) / 1e6; d < wait {
			t.Errorf("swap span lasts %v ms, less than its wait %v ms: it does not start at the swap's queueing", d, wait)
		}
		linked := map[string]int{}
		waitFor(t, "both chat spans' export", func() bool {
			clear(linked)
			for _, s := range exp.GetSpans() {
				if !strings.HasPrefix(s.Name, "chat ") {
					continue
				}
				n := 0
				for _, l := range s.Links {
					if l.SpanContext.SpanID() == swap.SpanContext.SpanID() {
						n++
					}
				}
				linked[s.SpanContext.SpanID().String()] = n
			}
			return len(linked) >= 2
		})
		if got := fmt.Sprint(sortedCounts(linked)); got != "[0 1]" {
			t.Errorf("links from the two chat spans to the swap: %v, want one (the queued request's) and none", got)
		}
		checkQueuedBehind(t, h, lora.terminal["id"].(string), "adapter_swap", swap)
		checkRunningAdapter(t, h, "lora", attrs[telemetry.AttrAdapterRevision])
	})
}

func sortedCounts(m map[string]int) []int {
	var out []int
	for _, n := range m {
		out = append(out, n)
	}
	if len(out) == 2 && out[0] > out[1] {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// TestAdapterRoutes: the four routes over real HTTP, their replies
// matching the closed schema: load makes the adapter the default (a
// request without the field runs with it; null runs the base model), the
// default cannot be deleted, unload returns to base, delete removes the
// files.
func TestAdapterRoutes(t *testing.T) {
	ref := refDir(t)
	h := newHarness(t, withAdapterModel(ref, adapterDir(t, ref)))
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	list := func(status int, _ http.Header, body []byte) adaptersBody {
		t.Helper()
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		if err := v.Validate(schemas.ObservabilityID, "adapters", body); err != nil {
			t.Errorf("adapters reply does not match its schema: %v\n%s", err, body)
		}
		var b adaptersBody
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := list(h.do(http.MethodGet, "/v1/adapters", nil, nil))
	byName := map[string]lora.Entry{}
	for _, a := range b.Available {
		byName[a.Name] = a
	}
	for _, name := range []string{"lora", "peft"} {
		a := byName[name]
		if a.Rank == nil || *a.Rank != 8 || *a.Alpha != 16 || len(a.Targets) == 0 || *a.SizeBytes <= 0 || !a.Loadable || a.Problem != nil {
			t.Errorf("%s listed as %+v, want rank 8, alpha 16, targets, a size, loadable", name, a)
		}
	}
	checkUnloadableListed(t, h, byName)
	if b.Active != nil || b.Running != nil || len(b.Loaded) != 0 {
		t.Errorf("at start: active %v, running %v, loaded %v; want base, base, none", b.Active, b.Running, b.Loaded)
	}
	checkRunningAdapter(t, h, baseAdapter, baseAdapter)

	b = list(h.do(http.MethodPost, "/v1/adapters/load", map[string]any{"name": "lora"}, nil))
	if b.Active == nil || *b.Active != "lora" || b.Running == nil || *b.Running != "lora" {
		t.Errorf("after load: active %v, running %v; want lora", b.Active, b.Running)
	}
	checkRunningAdapter(t, h, "lora", *byName["lora"].SHA256)
	used := func(extra map[string]any) (string, string) {
		t.Helper()
		status, hdr, body := h.do(http.MethodPost, chatPath, h.chatBody(extra), nil)
		if status != http.StatusOK {
			t.Fatalf("chat %v: %d %s", extra, status, body)
		}
		var resp map[string]any
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatal(err)
		}
		return perfOf(t, resp)["adapter_used"].(string), hdr.Get(revisionHeader)
	}
	perf := map[string]any{"include_performance": true}
	if u, rev := used(perf); u != "lora" || rev != *byName["lora"].SHA256 {
		t.Errorf("default after load: adapter_used %q, revision %q; want lora %s", u, rev, *byName["lora"].SHA256)
	}
	if u, rev := used(map[string]any{"include_performance": true, "adapter": nil}); u != "lora" || rev == "base" {
		t.Errorf("absent field: %q %q, want the default", u, rev)
	}
	var recent struct {
		Data []struct {
			AdapterUsed string `json:"adapter_used"`
		} `json:"data"`
	}
	h.getJSON("/v1/stats/recent-requests", &recent)
	if len(recent.Data) == 0 || recent.Data[0].AdapterUsed != "lora" {
		t.Errorf("recent requests %+v, want the newest with adapter_used lora (the dashboard shows it)", recent.Data)
	}
	status, _, body := h.do(http.MethodPost, chatPath, []byte(`{"model":"`+h.model.ID+`","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"include_performance":true,"adapter":null}`), nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"adapter_used":"base"`) {
		t.Errorf("adapter null with lora the default: %d %s, want adapter_used base", status, body)
	}
	status, _, body = h.do(http.MethodDelete, "/v1/adapters/lora", nil, nil)
	if code, _ := errorCode(t, body); status != http.StatusConflict || code != "adapter_active" {
		t.Errorf("delete the default: %d %s, want 409 adapter_active", status, code)
	}
	b = list(h.do(http.MethodPost, "/v1/adapters/unload", nil, nil))
	if b.Active != nil || b.Running != nil {
		t.Errorf("after unload: active %v, running %v; want base", b.Active, b.Running)
	}
	checkRunningAdapter(t, h, baseAdapter, baseAdapter)
	b = list(h.do(http.MethodDelete, "/v1/adapters/lora", nil, nil))
	for _, a := range b.Available {
		if a.Name == "lora" {
			t.Error("lora still listed after delete")
		}
	}
	status, _, body = h.do(http.MethodDelete, "/v1/adapters/lora", nil, nil)
	if code, _ := errorCode(t, body); status != http.StatusNotFound || code != "adapter_not_found" {
		t.Errorf("delete twice: %d %s, want 404 adapter_not_found", status, code)
	}
}

// TestAdapterBadInput: every bad input to the adapter routes and the
// adapter field is a 4xx in the OpenAI shape, and the server keeps
// serving.
func TestAdapterBadInput(t *testing.T) {
	ref := refDir(t)
	h := newHarness(t, withAdapterModel(ref, adapterDir(t, ref)))
	chat := func(adapter string) []byte {
		return []byte(`{"model":"` + h.model.ID + `","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"adapter":` + adapter + `}`)
	}
	load := "/v1/adapters/load"
	tests := []struct {
		name         string
		method, path string
		body         any
		status       int
		code         string
		mention      string // the message names it
	}{
		{"dot dot slash", http.MethodPost, load, `{"name":"../x"}`, 400, "invalid_adapter_name", ""},
		{"two segments", http.MethodPost, load, `{"name":"a/b"}`, 400, "invalid_adapter_name", ""},
		{"backslash", http.MethodPost, load, `{"name":"a\\b"}`, 400, "invalid_adapter_name", ""},
		{"empty name", http.MethodPost, load, `{"name":""}`, 400, "invalid_adapter_name", ""},
		{"dot", http.MethodPost, load, `{"name":"."}`, 400, "invalid_adapter_name", ""},
		{"dot dot", http.MethodPost, load, `{"name":".."}`, 400, "invalid_adapter_name", ""},
		{"NUL", http.MethodPost, load, `{"name":"a\u0000b"}`, 400, "invalid_adapter_name", ""},
		{"absolute", http.MethodPost, load, `{"name":"/etc"}`, 400, "invalid_adapter_name", ""},
		{"unknown", http.MethodPost, load, `{"name":"nope"}`, 404, "adapter_not_found", ""},
		{"malformed safetensors", http.MethodPost, load, `{"name":"broken"}`, 400, "adapter_layout_invalid", "adapter_model.safetensors"},
		{"a GGUF that is not an adapter", http.MethodPost, load, `{"name":"notlora"}`, 400, "adapter_layout_invalid", "notlora.gguf"},
		{"name of the wrong type", http.MethodPost, load, `{"name":1}`, 400, "invalid_type", ""},
		{"unknown field", http.MethodPost, load, `{"name":"lora","force":true}`, 400, "unknown_field", ""},
		{"no name", http.MethodPost, load, `{}`, 400, "missing_field", ""},
		{"array body", http.MethodPost, load, `[]`, 400, "invalid_json", ""},
		{"two values", http.MethodPost, load, `{"name":"lora"}{}`, 400, "invalid_json", ""},
		{"empty body", http.MethodPost, load, ``, 400, "invalid_json", ""},
		{"unload with a field", http.MethodPost, "/v1/adapters/unload", `{"name":"lora"}`, 400, "unknown_field", ""},
		{"delete ../x", http.MethodDelete, "/v1/adapters/..%2Fx", nil, 400, "invalid_adapter_name", ""},
		{"delete a/b", http.MethodDelete, "/v1/adapters/a/b", nil, 400, "invalid_adapter_name", ""},
		{"delete unknown", http.MethodDelete, "/v1/adapters/nope", nil, 404, "adapter_not_found", ""},
		{"chat unknown adapter", http.MethodPost, chatPath, chat(`"nope"`), 404, "adapter_not_found", ""},
		{"chat adapter ../x", http.MethodPost, chatPath, chat(`"../x"`), 400, "invalid_adapter_name", ""},
		{"chat adapter number", http.MethodPost, chatPath, chat(`5`), 400, "invalid_type", ""},
		{"chat broken adapter", http.MethodPost, chatPath, chat(`"broken"`), 400, "adapter_layout_invalid", "adapter_model.safetensors"},
		{"completion unknown adapter", http.MethodPost, completionsPath, `{"model":"` + h.model.ID + `","prompt":"hi","max_tokens":2,"adapter":"nope"}`, 404, "adapter_not_found", ""},
	}
	for _, tc := range tests {
		status, _, body := h.do(tc.method, tc.path, tc.body, nil)
		code, msg := errorCode(t, body)
		if status != tc.status || code != tc.code || !strings.Contains(msg, tc.mention) {
			t.Errorf("%s: %d %s %q, want %d %s naming %q", tc.name, status, code, msg, tc.status, tc.code, tc.mention)
		}
	}
	status, hdr, body := h.do(http.MethodPost, chatPath, chat(`"lora"`), nil)
	if status != http.StatusOK || len(hdr.Get(revisionHeader)) != 64 {
		t.Errorf("the server stopped serving adapters after bad input: %d %q %s", status, hdr.Get(revisionHeader), body)
	}
	h.checkHealthy(t, "bad adapter input")
}

// TestAdapterShapeMismatch: a PEFT adapter whose shapes do not fit the
// served model (the reference LoRA, made for tiny-llama, on kiln-tiny) is
// a 400 adapter_layout_invalid naming the tensor, for the route and for a
// request; the server keeps serving.
func TestAdapterShapeMismatch(t *testing.T) {
	ref := refDir(t)
	h := newHarness(t, withConfig(func(c *Config) { c.AdapterDir = adapterDir(t, ref) }))
	for _, tc := range []struct {
		path string
		body string
	}{
		{"/v1/adapters/load", `{"name":"peft"}`},
		{chatPath, `{"model":"kiln-tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"adapter":"peft"}`},
	} {
		status, _, body := h.do(http.MethodPost, tc.path, tc.body, nil)
		code, msg := errorCode(t, body)
		if status != http.StatusBadRequest || code != "adapter_layout_invalid" || !strings.Contains(msg, "lora_A") {
			t.Errorf("%s: %d %s %q, want 400 adapter_layout_invalid naming a lora_A tensor", tc.path, status, code, msg)
		}
	}
	h.checkHealthy(t, "an adapter that does not fit")
}

// TestAdapterRoutesNeedToken: with an access token set, every adapter
// route answers 401 without it (nothing is loaded or deleted) and works
// with it.
func TestAdapterRoutesNeedToken(t *testing.T) {
	ref := refDir(t)
	dir := adapterDir(t, ref)
	h := newHarness(t, withAdapterModel(ref, dir), withConfig(func(c *Config) { c.AccessToken = "s3cret" }))
	routes := []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, "/v1/adapters", nil},
		{http.MethodPost, "/v1/adapters/load", `{"name":"lora"}`},
		{http.MethodPost, "/v1/adapters/unload", nil},
		{http.MethodDelete, "/v1/adapters/peft", nil},
	}
	for _, r := range routes {
		if status, _, _ := h.do(r.method, r.path, r.body, nil); status != http.StatusUnauthorized {
			t.Errorf("%s %s without the token: %d, want 401", r.method, r.path, status)
		}
	}
	if h.srv.adapters.Default() != nil || len(h.srv.adapters.LoadedNames()) != 0 {
		t.Error("an unauthenticated load changed the adapters")
	}
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	for _, r := range routes {
		if status, _, body := h.do(r.method, r.path, r.body, auth); status != http.StatusOK {
			t.Errorf("%s %s with the token: %d %s", r.method, r.path, status, body)
		}
	}
}

// checkUnloadableListed: the adapters a load refuses are listed, marked
// not loadable, with the reason the load gives: a misfit of shapes (the
// files inspect fine), a weights file that is not safetensors, a GGUF
// that is a base model.
func checkUnloadableListed(t *testing.T, h *harness, byName map[string]lora.Entry) {
	t.Helper()
	for name, inspects := range map[string]bool{"misfit": true, "broken": true, "notlora": false} {
		a, ok := byName[name]
		if !ok {
			t.Errorf("%s is not listed", name)
			continue
		}
		if a.Loadable || a.Problem == nil || (a.Rank != nil) != inspects {
			t.Errorf("%s listed as %+v; want loadable false with a problem, rank known %v", name, a, inspects)
			continue
		}
		status, _, body := h.do(http.MethodPost, "/v1/adapters/load", map[string]any{"name": name}, nil)
		_, msg := errorCode(t, body)
		if status != http.StatusBadRequest || !strings.Contains(msg, *a.Problem) {
			t.Errorf("%s: load answered %d %q; the listing's problem %q should be its reason", name, status, msg, *a.Problem)
		}
	}
}
