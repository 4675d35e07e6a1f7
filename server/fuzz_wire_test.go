package server

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/kiln-ai/kiln/server/anthropic"
)

// FuzzAgentAPIs posts generated bodies to POST /v1/responses,
// /v1/messages and /v1/messages/count_tokens (real engine, kiln-tiny):
// never a 5xx, every refusal in its protocol's error shape, and
// afterwards /health is 200.
func FuzzAgentAPIs(f *testing.F) {
	paths := []string{responsesPath, anthropic.MessagesPath, anthropic.CountTokensPath}
	tool := `{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":4}},"required":["city"],"additionalProperties":false}}`
	clientTool := `{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string","maxLength":4}},"required":["city"]}}`
	for _, s := range []string{
		`{"model":"kiln-tiny","input":"hi","max_output_tokens":2,"stream":true,"include_performance":true}`,
		`{"model":"kiln-tiny","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","call_id":"c","name":"get_weather","arguments":"{\"city\":\"x\"}"},{"type":"function_call_output","call_id":"c","output":"sunny"}],"max_output_tokens":2}`,
		`{"model":"kiln-tiny","input":"w","tools":[` + tool + `],"tool_choice":"required","max_output_tokens":40,"stream":true}`,
		`{"model":"kiln-tiny","input":"w","text":{"format":{"type":"json_schema","name":"w","schema":{"type":"object","properties":{"a":{"enum":[1,2]}},"required":["a"]}}},"max_output_tokens":30}`,
		`{"model":"kiln-tiny","input":"w","include":["message.output_text.logprobs"],"top_logprobs":2,"max_output_tokens":2}`,
		`{"model":"kiln-tiny","input":[{"type":"item_reference","id":"msg_x"}],"previous_response_id":"resp_x"}`,
		`{"model":"kiln-tiny","input":[{"type":"computer_call"}],"text":{"format":{"type":"yaml"}}}`,
		`{"model":"kiln-tiny","max_tokens":2,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":"hi"}],"stream":true,"include_performance":true}`,
		`{"model":"kiln-tiny","max_tokens":40,"messages":[{"role":"user","content":"w"}],"tools":[` + clientTool + `],"tool_choice":{"type":"any"},"stream":true}`,
		`{"model":"kiln-tiny","max_tokens":2,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"get_weather","input":{"city":"x"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"ok"}],"is_error":true}]}],"tools":[` + clientTool + `]}`,
		`{"model":"kiln-tiny","max_tokens":3,"messages":[{"role":"user","content":"hi"}],"stop_sequences":["e"," "],"top_k":3}`,
		`{"model":"kiln-tiny","messages":[{"role":"user","content":[{"type":"image"}]}],"tool_choice":{"type":"tool"}}`,
		`{"model":"kiln-tiny","messages":[{"role":"system","content":"x"}],"max_tokens":0}`,
		`[]`, `{`, `null`,
	} {
		for i := range paths {
			f.Add(uint8(i), []byte(s))
		}
	}
	h := newHarness(f, withConfig(func(c *Config) { c.MaxBodyBytes = 1 << 16 }))
	client := h.ts.Client()
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		path := paths[int(route)%len(paths)]
		status, out, err := fuzzPost(client, h.ts.URL+path, body, fuzzRequestTimeout)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			// a long generation, cut off; the checks below still apply
		case err != nil:
			t.Fatalf("POST %s %q: %v", path, body, err)
		case status >= 500:
			t.Fatalf("%s: status %d for %q: %s", path, status, body, out)
		case status != http.StatusOK && path == responsesPath:
			checkErrorBody(t, out)
		case status != http.StatusOK:
			validate(t, "anthropic_error", out)
		}
		resp, err := client.Get(h.ts.URL + "/health")
		if err != nil {
			t.Fatalf("/health after %q: %v", body, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/health %d after %s %q", resp.StatusCode, path, body)
		}
	})
}
