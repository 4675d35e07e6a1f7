package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/schemas"
)

// prefixDouble is the real engine whose results report the prefix-cache
// use that use gives each submitted prompt, as the engine's Result does
// once the cache fills it: the seam for tests of what the server makes of
// a hit, a partial hit or a miss, whatever the engine caches.
type prefixDouble struct {
	generator
	use func(prompt []int) engine.PrefixUse
}

func (d prefixDouble) Submit(ctx context.Context, r engine.Request) (generation, error) {
	g, err := d.generator.Submit(ctx, r)
	if err != nil {
		return nil, err
	}
	return prefixGeneration{g, d.use(r.Prompt)}, nil
}

type prefixGeneration struct {
	generation
	use engine.PrefixUse
}

func (g prefixGeneration) Result() engine.Result {
	res := g.generation.Result()
	res.Prefix = g.use
	return res
}

// withPrefixUse makes every request's result report use(prompt).
func withPrefixUse(use func(prompt []int) engine.PrefixUse) harnessOption {
	return func(s *harnessSetup) {
		s.gen = func(g generator) generator { return prefixDouble{g, use} }
	}
}

// prefixUses are the cases of the tests below: a miss, a whole-prompt hit
// (all but the last token, which is always computed) and a partial hit
// that diverged. Prompts of kiln-tiny's requests here are longer than 4
// tokens.
var prefixUses = []struct {
	name string
	use  func(prompt []int) engine.PrefixUse
	want func(prompt int) map[string]any // prefix_cache
}{
	{
		"miss",
		func(p []int) engine.PrefixUse {
			return engine.PrefixUse{Prefilled: len(p), Stop: timing.PrefixStopUncached}
		},
		func(p int) map[string]any {
			return map[string]any{"cached_tokens": 0.0, "prefilled_tokens": float64(p), "source": nil, "stop_reason": "uncached"}
		},
	},
	{
		"whole prompt",
		func(p []int) engine.PrefixUse {
			return engine.PrefixUse{Cached: len(p) - 1, Prefilled: 1, Source: timing.PrefixSourceShared, Stop: timing.PrefixStopPromptEnd}
		},
		func(p int) map[string]any {
			return map[string]any{"cached_tokens": float64(p - 1), "prefilled_tokens": 1.0, "source": "shared_prefix", "stop_reason": "prompt_end"}
		},
	},
	{
		"diverged",
		func(p []int) engine.PrefixUse {
			return engine.PrefixUse{Cached: 4, Prefilled: len(p) - 4, Source: timing.PrefixSourceSlot, Stop: timing.PrefixStopDiverged}
		},
		func(p int) map[string]any {
			return map[string]any{"cached_tokens": 4.0, "prefilled_tokens": float64(p - 4), "source": "same_slot", "stop_reason": "diverged"}
		},
	},
}

// TestPrefixCacheReported: what the engine says a prompt reused reaches
// every surface with the same numbers and exactly the documented keys:
// usage.prompt_tokens_details.cached_tokens (always, 0 on a miss) on chat
// and legacy completions, streamed (the include_usage chunk) and not;
// metadata.performance.prefix_cache (source null exactly when nothing was
// reused); and the recent-requests record and its detail.
func TestPrefixCacheReported(t *testing.T) {
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	modes := []struct {
		name   string
		stream bool
		perf   bool
	}{
		{"stream", true, true},
		{"whole", false, true},
		{"whole without metadata", false, false},
	}
	for _, pu := range prefixUses {
		t.Run(pu.name, func(t *testing.T) {
			h := newHarness(t, withPrefixUse(pu.use))
			for _, legacy := range []bool{false, true} {
				for _, m := range modes {
					name := "chat " + m.name
					body := h.chatBody(map[string]any{"max_tokens": 3, "include_performance": m.perf})
					path := chatPath
					if legacy {
						name, path = "completion "+m.name, completionsPath
						body = map[string]any{"model": h.model.ID, "prompt": "The sun is a star.", "max_tokens": 3, "temperature": 0,
							"include_performance": m.perf}
					}
					if m.stream {
						body["stream"] = true
						body["stream_options"] = map[string]any{"include_usage": true}
					}
					t.Run(name, func(t *testing.T) {
						checkPrefixCacheResponse(t, h, v, path, body, m.stream, m.perf, pu.want)
					})
				}
			}
		})
	}
}

// checkPrefixCacheResponse sends body to path and checks its usage, its
// performance metadata (when perf) and its recent-requests record
// against want.
func checkPrefixCacheResponse(t *testing.T, h *harness, v *schemas.Validator, path string, body map[string]any,
	stream, perf bool, want func(prompt int) map[string]any) {
	t.Helper()
	status, _, raw := h.do(http.MethodPost, path, body, nil)
	if status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", status, raw)
	}
	var id string
	var usage, perfObj map[string]any
	if stream {
		p := parseStream(t, raw)
		for i, r := range p.raw {
			if p.order[i] != "timing" && path == chatPath { // the schema has no text_completion chunk
				if err := v.Validate(schemas.InferenceID, "stream_chunk", r); err != nil {
					t.Errorf("chunk %d: %v\n%s", i, err, r)
				}
			}
		}
		if p.order[len(p.order)-1] != "usage" {
			t.Fatalf("stream order %v: want the usage chunk last", p.order)
		}
		last := p.raw[len(p.raw)-1]
		var u struct {
			ID    string         `json:"id"`
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal(last, &u); err != nil {
			t.Fatal(err)
		}
		id, usage = u.ID, u.Usage
		if perf {
			perfObj = plainJSON(t, perfOf(t, p.terminal))
		}
	} else {
		if path == chatPath {
			if err := v.Validate(schemas.InferenceID, "chat_completion", raw); err != nil {
				t.Errorf("%v\n%s", err, raw)
			}
		}
		var whole struct {
			ID       string         `json:"id"`
			Usage    map[string]any `json:"usage"`
			Metadata *struct {
				Performance map[string]any `json:"performance"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &whole); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		id, usage = whole.ID, whole.Usage
		if perf != (whole.Metadata != nil) {
			t.Fatalf("metadata present %v, want %v: %s", whole.Metadata != nil, perf, raw)
		}
		if perf {
			perfObj = whole.Metadata.Performance
		}
	}
	prompt := int(num(t, usage["prompt_tokens"]))
	w := want(prompt)
	wantUsage := map[string]any{
		"prompt_tokens": float64(prompt), "completion_tokens": usage["completion_tokens"], "total_tokens": usage["total_tokens"],
		"prompt_tokens_details": map[string]any{"cached_tokens": w["cached_tokens"]},
	}
	if diff := cmp.Diff(wantUsage, usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if perf {
		if diff := cmp.Diff(w, perfObj["prefix_cache"]); diff != "" {
			t.Errorf("metadata.performance.prefix_cache (-want +got):\n%s", diff)
		}
	}

	var list struct {
		Data []map[string]any `json:"data"`
	}
	h.getJSON("/v1/stats/recent-requests", &list)
	if len(list.Data) == 0 || list.Data[0]["id"] != id {
		t.Fatalf("the newest record is not %s: %v", id, list.Data)
	}
	if diff := cmp.Diff(w, list.Data[0]["prefix_cache"]); diff != "" {
		t.Errorf("recent-requests record's prefix_cache (-want +got):\n%s", diff)
	}
	var detail map[string]any
	rawDetail := h.getJSON("/v1/stats/recent-requests/"+id, &detail)
	if err := v.Validate(schemas.ObservabilityID, "recent_request_detail", rawDetail); err != nil {
		t.Errorf("detail: %v", err)
	}
	if diff := cmp.Diff(w, detail["prefix_cache"]); diff != "" {
		t.Errorf("detail's prefix_cache (-want +got):\n%s", diff)
	}
}

// plainJSON is m decoded as json.Unmarshal decodes it (float64 numbers,
// not parseStream's json.Number).
func plainJSON(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPrefixCacheFromTheEngine: for a first request, which the real cache
// has nothing for, cached_tokens is present as 0, source is null, and the
// surfaces agree (prefix_http_test.go drives every other outcome).
func TestPrefixCacheFromTheEngine(t *testing.T) {
	h := newHarness(t)
	status, _, raw := h.do(http.MethodPost, chatPath, h.chatBody(map[string]any{"max_tokens": 2, "include_performance": true}), nil)
	if status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", status, raw)
	}
	var resp struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			Details      *struct {
				CachedTokens *int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
		Metadata struct {
			Performance struct {
				PrefixCache map[string]any `json:"prefix_cache"`
			} `json:"performance"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Usage.Details == nil || resp.Usage.Details.CachedTokens == nil || *resp.Usage.Details.CachedTokens != 0 {
		t.Fatalf("usage %s: want prompt_tokens_details.cached_tokens 0 on a first request", raw)
	}
	pc := resp.Metadata.Performance.PrefixCache
	if pc["cached_tokens"] != 0.0 || pc["source"] != nil {
		t.Errorf("prefix_cache %v: want cached_tokens 0 and source null", pc)
	}
	if p, ok := pc["prefilled_tokens"].(float64); !ok || int(p) > resp.Usage.PromptTokens {
		t.Errorf("prefix_cache %v: prefilled_tokens beyond the prompt's %d tokens", pc, resp.Usage.PromptTokens)
	}
}
