package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/server/openai"
	"github.com/kiln-ai/kiln/server/wire"
	"github.com/kiln-ai/kiln/telemetry"
)

// discardWriter is a ResponseWriter that flushes to nowhere.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

// BenchmarkTokenPath measures the server's own per-token work: decode the
// text, write and flush the content chunk, record the token with
// telemetry (each token carries a blocker, as under prefill traffic), and
// (events) write the timing event. Compare events=false
// with events=true for the cost of the opt-in.
func BenchmarkTokenPath(b *testing.B) {
	model, err := llama.Open("kiln-tiny")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = model.Close() }()
	tel, err := telemetry.New(telemetry.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	s := &Server{tok: model.Tokenizer, modelID: model.ID, clock: realClock{}}
	for _, events := range []bool{false, true} {
		name := "events=false"
		if events {
			name = "events=true"
		}
		b.Run(name, func(b *testing.B) {
			now := time.Now()
			_, treq := tel.StartRequest(context.Background(), telemetry.RequestInfo{Model: model.ID, Received: now, Stream: true})
			p := &reply{sse: newSSEWriter(&discardWriter{h: http.Header{}}), wire: &openai.Wire{}}
			p.Response = wire.Response{ID: "chatcmpl-bench", Created: now.Unix(), Model: model.ID, Out: p, Vocab: s.tok}
			req := &wire.Request{Stream: true}
			x := &exchange{
				reply: p, s: s, req: &job{Request: req}, treq: treq, cancel: func() {},
				Choice: wire.Choice{Resp: &p.Response, Req: req},
				events: events, dec: s.tok.NewDecoder(),
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				ready := now.Add(time.Duration(i) * time.Millisecond)
				tok := engine.Token{Index: i, ID: 100 + i%1000, Ready: ready, Delivered: ready, NumBlockers: 1}
				tok.Blockers[0] = engine.Blocker{Kind: engine.BlockerPrefill, Request: treq.ID(), Start: ready.Add(-time.Millisecond), End: ready}
				x.token(tok)
				if i%4096 == 4095 {
					x.Text.Reset() // the completion buffer is per request; keep it bounded
				}
			}
		})
	}
}

// BenchmarkParseChatRequest measures the strict decoder on a typical body.
func BenchmarkParseChatRequest(b *testing.B) {
	body := []byte(`{"model":"kiln-tiny","messages":[{"role":"system","content":"You are brief."},{"role":"user","content":"Explain the pause in two sentences."}],"max_tokens":64,"temperature":0.7,"top_p":0.9,"stream":true,"stream_options":{"include_usage":true},"include_performance":true}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := openai.ParseChat(body); err != nil {
			b.Fatal(err)
		}
	}
}
