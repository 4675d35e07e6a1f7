package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/server/wire"
)

// FuzzAdapterName: whatever name a request gives, a refused one is a
// 400 invalid_adapter_name about the parameter it came in (the registry's
// own FuzzName checks that an accepted one stays inside the directory).
func FuzzAdapterName(f *testing.F) {
	for _, s := range []string{"lora", "../x", "a/b", `a\b`, "", ".", "..", "a\x00b", "/etc", "x.gguf", "..a", "a..", " ", "\u202e", strings.Repeat("a", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := about("name", lora.CheckName(name))
		if err == nil {
			return
		}
		e := errorFor(err, 0)
		if e.Status != http.StatusBadRequest || e.Code != "invalid_adapter_name" || e.Param != "name" {
			t.Fatalf("%q: %+v, want a 400 invalid_adapter_name about name", name, e)
		}
	})
}

// FuzzAdapterRouteBody: whatever the body of POST /v1/adapters/load,
// decodeStrict either accepts exactly one object of the known fields or
// answers a 400 in the OpenAI shape; it never panics.
func FuzzAdapterRouteBody(f *testing.F) {
	for _, s := range []string{`{"name":"lora"}`, `{"name":1}`, `{"name":"a","x":1}`, `[]`, `{}`, ``, `{"name":"a"}{}`, `null`, `{"name":null}`, `"x"`, `{"name":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/v1/adapters/load", strings.NewReader(string(body)))
		var v adapterNameBody
		err := decodeStrict(r, &v, false)
		if err == nil {
			return
		}
		var e *wire.Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Type != wire.TypeInvalidRequest || e.Code == "" {
			t.Fatalf("%q: %v, want a 400 invalid_request_error with a code", body, err)
		}
	})
}
