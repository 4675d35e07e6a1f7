package schemas

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func newValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const reasons = `"stall_reasons":{"actor_queue":0,"actor_admission":0,"actor_prefill":1,"actor_decode":0,"actor_cycle_idle":0,"response_delivery":0,"handler_queue":0,"client_delivery":0,"sampling":0,"readback":0,"gpu_lock_wait":0,"graph_capture":0,"graph_replay":0,"synchronization":0,"resize":0,"trim":0,"adapter":0,"training":0,"unexplained":0}`

const phases = `"phases":{"actor_queue_ms":0.1,"actor_admission_ms":0,"tokenization_ms":0.2,"prefill_ms":3,"decode_ms":10,"actor_cycle_idle_ms":0,"sampling_ms":1,"readback_ms":null,"response_delivery_ms":0.01,"handler_queue_ms":0.3,"client_delivery_ms":null,"gpu_lock_wait_ms":0,"graph_capture_ms":null,"graph_replay_ms":null,"synchronization_ms":null,"resize_ms":null,"trim_ms":null,"adapter_ms":null,"training_ms":null,"unexplained_ms":0.5}`

const summary = `{"emitted_tokens":3,"gap_samples":2,"retained_gap_samples":2,"gap_samples_truncated":false,"ttft_ms":5,"itl_ms_p50":1,"itl_ms_p99":300,"itl_ms_p999":300,"max_itl_ms":300,"stall_threshold_ms":250,"stall_count":1,"unexplained_stall_count":0,` + reasons + `,` + phases + `}`

// TestSchemas: hand-written instances, valid and invalid in one way each,
// prove that the schemas accept the contract and reject what it excludes
// (closed objects, required keys, nulls, enums). Real server responses are
// validated by the server package's tests.
func TestSchemas(t *testing.T) {
	v := newValidator(t)
	event := `{"object":"kiln.token_timing","source":"batching_engine","token_index":0,"token_id":5,"ready_ms":1,"producer_delivered_ms":1.1,"handler_received_ms":1.2,"body_enqueued_ms":1.3,"response_delivery_ms":0.1,"handler_queue_ms":0.1,"queue_delay_ms":0.2,"client_delivery_ms":0.1,"blocking_phase":null,"blocking_phase_ms":null}`
	profile := `{"profile":"stable","source":"default","effective_policy":{"training_gpu_ownership":"writer_priority","adapter_weight_transitions":"writer_priority","dynamic_kv_resize":"writer_priority","allocator_reclaim":"writer_priority"}}`
	resize := `{"object":"kiln.maintenance.kv_resize","reason":"maintenance","direction":"grow","from_tokens":512,"requested_tokens":1024,"actual_tokens":1024,"from_slots":2,"slots":4,"bytes_before":10,"bytes_after":20,"dropped_bytes":0,"rss_before_bytes":10,"rss_after_bytes":9,"duration_ms":1.5,"drain_ms":0,"wait_ms":2}`
	recent := `{"object":"kiln.maintenance.recent","operations":[{"id":2,"kind":"resize","reason":"maintenance","start":"2026-11-30T16:00:00.000Z","duration_ms":null,"running":true,"outcome":"","summary":"","hold_ms":0,"steps":0},{"id":1,"kind":"trim","reason":"automatic_memory_policy","start":"2026-11-30T15:59:00.000Z","duration_ms":3.5,"running":false,"outcome":"reclaimed","summary":"trim, freed 10 B","hold_ms":3.5,"steps":0},{"id":3,"kind":"training_job","reason":"sft","start":"2026-11-30T15:58:00.000Z","duration_ms":null,"running":true,"outcome":"","summary":"training step 2 of 4","hold_ms":90,"steps":2}]}`
	constraint := `{"kind":"tool_required","compile_ms":12.5,"cache_hit":false,"mask_ms":3.5,"forced_close":false,"truncated":false}`
	trim := `{"object":"kiln.maintenance.trim","outcome":"reclaimed","reclaimed_bytes":10,"backend_bytes":4,"prefix_cache_blocks_dropped":0,"heap_released_bytes":6,"rss_before_bytes":10,"rss_after_bytes":9,"duration_ms":1.5,"deferred_ms":0}`
	adapters := `{"object":"kiln.adapters","active":"support","running":"support","loaded":["support"],"available":[{"name":"support","format":"peft","rank":8,"alpha":16,"targets":["attn_q","attn_v"],"size_bytes":1024,"sha256":"` + strings.Repeat("a", 64) + `","loadable":true,"problem":null}]}`
	unreadable := `{"object":"kiln.adapters","active":null,"running":null,"loaded":[],"available":[{"name":"x","format":"gguf","rank":null,"alpha":null,"targets":null,"size_bytes":null,"sha256":null,"loadable":false,"problem":"x.gguf: general.type is \"\", want \"adapter\""}]}`
	running := `{"name":"support","revision":"` + strings.Repeat("a", 64) + `","revision_number":3002399751580330}` // 0xaaaaaaaaaaaaa
	loaded := `{"id":"m","format":"gguf","architecture":"llama","parameters":100,"weight_types":{"q4_k":14,"f32":5},"weight_bytes":400,"file_bytes":500,"context":64,"model_context":128,"vocab_size":40,"kv_bytes_per_token":8,"kv_bytes_per_slot":512,"recurrent_bytes_per_slot":null,"mapped_bytes":500,"resident_bytes":null}`
	prefix := `{"cached_tokens":0,"prefilled_tokens":3,"source":null,"stop_reason":"off"}`
	hit := `{"cached_tokens":1024,"prefilled_tokens":76,"source":"shared_prefix","stop_reason":"diverged"}`
	usage := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":0}}}`
	model := `{"id":"m","object":"model","created":1,"owned_by":"kiln","max_model_len":64,"meta":{"n_ctx_train":128,"n_params":100,"size":400,"n_vocab":40,"n_embd":32}}`
	tests := []struct {
		name     string
		id, def  string
		instance string
		valid    bool
	}{
		{"loaded model", ObservabilityID, "loaded_model", loaded, true},
		{"loaded embedded model", ObservabilityID, "loaded_model", strings.Replace(strings.Replace(loaded, `"file_bytes":500`, `"file_bytes":null`, 1), `"gguf"`, `"embedded"`, 1), true},
		{"loaded model zero file", ObservabilityID, "loaded_model", strings.Replace(loaded, `"file_bytes":500`, `"file_bytes":0`, 1), false},
		{"loaded model unknown type", ObservabilityID, "loaded_model", strings.Replace(loaded, `"q4_k"`, `"Q4_K"`, 1), false},
		{"loaded model unknown format", ObservabilityID, "loaded_model", strings.Replace(loaded, `"gguf"`, `"onnx"`, 1), false},
		{"trace export off", ObservabilityID, "trace_export", `{"enabled":false,"endpoint":null,"protocol":null}`, true},
		{"trace export on", ObservabilityID, "trace_export", `{"enabled":true,"endpoint":"http://c:4318/v1/traces","protocol":"http/protobuf"}`, true},
		{"trace export headers", ObservabilityID, "trace_export", `{"enabled":true,"endpoint":"http://c:4318","protocol":"grpc","headers":"x"}`, false},
		{"prefix cache unused", ObservabilityID, "prefix_cache_use", prefix, true},
		{"prefix cache hit", ObservabilityID, "prefix_cache_use", hit, true},
		{"prefix cache every source", ObservabilityID, "prefix_cache_use", strings.Replace(hit, `"shared_prefix"`, `"checkpoint"`, 1), true},
		{"prefix cache same slot to the prompt's end", ObservabilityID, "prefix_cache_use", strings.Replace(strings.Replace(hit, `"shared_prefix"`, `"same_slot"`, 1), `"diverged"`, `"prompt_end"`, 1), true},
		{"prefix cache miss with a reason", ObservabilityID, "prefix_cache_use", strings.Replace(prefix, `"off"`, `"other_adapter"`, 1), true},
		{"prefix cache source without reuse", ObservabilityID, "prefix_cache_use", strings.Replace(prefix, `"source":null`, `"source":"same_slot"`, 1), false},
		{"prefix cache reuse without a source", ObservabilityID, "prefix_cache_use", strings.Replace(hit, `"shared_prefix"`, `null`, 1), false},
		{"prefix cache off but reused", ObservabilityID, "prefix_cache_use", strings.Replace(hit, `"diverged"`, `"off"`, 1), false},
		{"prefix cache unknown source", ObservabilityID, "prefix_cache_use", strings.Replace(hit, `"shared_prefix"`, `"radix"`, 1), false},
		{"prefix cache unknown stop reason", ObservabilityID, "prefix_cache_use", strings.Replace(hit, `"diverged"`, `"full"`, 1), false},
		{"prefix cache missing key", ObservabilityID, "prefix_cache_use", strings.Replace(hit, `"prefilled_tokens":76,`, ``, 1), false},
		{"prefix cache extra key", ObservabilityID, "prefix_cache_use", strings.Replace(hit, `{`, `{"diverged_at":1024,`, 1), false},
		{"prefix cache config", ObservabilityID, "prefix_cache_config", `{"enabled":true,"max_bytes":null}`, true},
		{"prefix cache config bounded", ObservabilityID, "prefix_cache_config", `{"enabled":false,"max_bytes":536870912}`, true},
		{"prefix cache config zero bound", ObservabilityID, "prefix_cache_config", `{"enabled":true,"max_bytes":0}`, false},
		{"prefix cache config missing bound", ObservabilityID, "prefix_cache_config", `{"enabled":true}`, false},
		{"usage chunk", InferenceID, "stream_chunk", usage, true},
		{"usage chunk reusing", InferenceID, "stream_chunk", strings.Replace(usage, `"cached_tokens":0`, `"cached_tokens":2`, 1), true},
		{"usage chunk without cached tokens", InferenceID, "stream_chunk", strings.Replace(usage, `,"prompt_tokens_details":{"cached_tokens":0}`, ``, 1), false},
		{"usage chunk null cached tokens", InferenceID, "stream_chunk", strings.Replace(usage, `"cached_tokens":0`, `"cached_tokens":null`, 1), false},
		{"usage chunk extra details", InferenceID, "stream_chunk", strings.Replace(usage, `"cached_tokens":0`, `"cached_tokens":0,"audio_tokens":0`, 1), false},
		{"model", InferenceID, "model", model, true},
		{"model list", InferenceID, "model_list", `{"object":"list","data":[` + model + `]}`, true},
		{"model without meta", InferenceID, "model", strings.Replace(model, `,"meta":{"n_ctx_train":128,"n_params":100,"size":400,"n_vocab":40,"n_embd":32}`, ``, 1), false},
		{"model zero context", InferenceID, "model", strings.Replace(model, `"max_model_len":64`, `"max_model_len":0`, 1), false},
		{"summary", ObservabilityID, "latency_summary", summary, true},
		{"summary extra key", ObservabilityID, "latency_summary", strings.Replace(summary, `{`, `{"x":1,`, 1), false},
		{"summary missing key", ObservabilityID, "latency_summary", strings.Replace(summary, `"gap_samples":2,`, ``, 1), false},
		{"summary null int", ObservabilityID, "latency_summary", strings.Replace(summary, `"stall_count":1`, `"stall_count":null`, 1), false},
		{"event", InferenceID, "token_timing_event", event, true},
		{"event blocking", InferenceID, "token_timing_event", strings.Replace(strings.Replace(event, `"blocking_phase":null`, `"blocking_phase":"actor_prefill"`, 1), `"blocking_phase_ms":null`, `"blocking_phase_ms":280`, 1), true},
		{"event unknown reason", InferenceID, "token_timing_event", strings.Replace(event, `"blocking_phase":null`, `"blocking_phase":"gc"`, 1), false},
		{"event logprobs", InferenceID, "token_timing_event", strings.Replace(event, `{`, `{"logprobs":null,`, 1), false},
		{"decode stats empty", ObservabilityID, "decode_stats", `{"sample_count":0,"tok_per_sec":0,"p50_itl_ms":0,"p99_itl_ms":0,"p999_itl_ms":0,"mean_itl_ms":0,"max_itl_ms":0,"stall_threshold_ms":250,"stall_count":0,"unexplained_stall_count":0,` + reasons + `,"window_secs":60}`, true},
		{"decode stats window", ObservabilityID, "decode_stats", `{"sample_count":0,"tok_per_sec":0,"p50_itl_ms":0,"p99_itl_ms":0,"p999_itl_ms":0,"mean_itl_ms":0,"max_itl_ms":0,"stall_threshold_ms":250,"stall_count":0,"unexplained_stall_count":0,` + reasons + `,"window_secs":30}`, false},
		{"debug disabled", ObservabilityID, "debug_disabled", `{"error":{"message":"start kiln with --debug-state or KILN_DEBUG_STATE=1","type":"permission_error","param":null,"code":"debug_state_disabled"}}`, true},
		{"serving profile", ObservabilityID, "serving_profile", profile, true},
		{"serving profile unknown", ObservabilityID, "serving_profile", strings.Replace(profile, `"stable"`, `"fast"`, 1), false},
		{"serving profile extra policy", ObservabilityID, "serving_profile", strings.Replace(profile, `"allocator_reclaim"`, `"gc":"exclusive","allocator_reclaim"`, 1), false},
		{"serving profile bad policy", ObservabilityID, "serving_profile", strings.Replace(profile, `"dynamic_kv_resize":"writer_priority"`, `"dynamic_kv_resize":"shared"`, 1), false},
		{"adapters", ObservabilityID, "adapters", adapters, true},
		{"adapters unreadable", ObservabilityID, "adapters", unreadable, true},
		{"adapters unreadable without a problem", ObservabilityID, "adapters", strings.Replace(unreadable, `"problem":"x.gguf: general.type is \"\", want \"adapter\""`, `"problem":null`, 1), false},
		{"adapters unreadable but loadable", ObservabilityID, "adapters", strings.Replace(unreadable, `"loadable":false,"problem":"x.gguf: general.type is \"\", want \"adapter\""`, `"loadable":true,"problem":null`, 1), false},
		{"adapters loadable with a problem", ObservabilityID, "adapters", strings.Replace(adapters, `"problem":null`, `"problem":"x"`, 1), false},
		{"adapters without loadable", ObservabilityID, "adapters", strings.Replace(adapters, `"loadable":true,`, ``, 1), false},
		{"adapters base", ObservabilityID, "adapters", `{"object":"kiln.adapters","active":null,"running":null,"loaded":[],"available":[]}`, true},
		{"adapters extra field", ObservabilityID, "adapters", strings.Replace(adapters, `"rank":8`, `"rank":8,"path":"/x"`, 1), false},
		{"adapters unknown format", ObservabilityID, "adapters", strings.Replace(adapters, `"peft"`, `"onnx"`, 1), false},
		{"adapters short sha", ObservabilityID, "adapters", strings.Replace(adapters, `"sha256":"`+strings.Repeat("a", 64), `"sha256":"abc`, 1), false},
		{"running adapter", ObservabilityID, "running_adapter", running, true},
		{"running adapter base", ObservabilityID, "running_adapter", `{"name":"base","revision":"base","revision_number":0}`, true},
		{"running adapter short sha", ObservabilityID, "running_adapter", strings.Replace(running, strings.Repeat("a", 64), "abc", 1), false},
		{"running adapter revision past 52 bits", ObservabilityID, "running_adapter", strings.Replace(running, "3002399751580330", "4503599627370496", 1), false},
		{"running adapter extra field", ObservabilityID, "running_adapter", strings.Replace(running, `"name"`, `"path":"/x","name"`, 1), false},
		{"trim", ObservabilityID, "maintenance_trim", trim, true},
		{"trim unknown outcome", ObservabilityID, "maintenance_trim", strings.Replace(trim, `"reclaimed"`, `"partial"`, 1), false},
		{"trim missing rss", ObservabilityID, "maintenance_trim", strings.Replace(trim, `"rss_after_bytes":9,`, ``, 1), false},
		{"resize", ObservabilityID, "maintenance_kv_resize", resize, true},
		{"resize unknown reason", ObservabilityID, "maintenance_kv_resize", strings.Replace(resize, `"maintenance"`, `"operator"`, 1), false},
		{"resize missing rss", ObservabilityID, "maintenance_kv_resize", strings.Replace(resize, `"rss_after_bytes":9,`, ``, 1), false},
		{"recent", ObservabilityID, "maintenance_recent", recent, true},
		{"recent unknown kind", ObservabilityID, "maintenance_recent", strings.Replace(recent, `"kind":"trim"`, `"kind":"gc"`, 1), false},
		{"recent extra field", ObservabilityID, "maintenance_recent", strings.Replace(recent, `"running":true`, `"running":true,"request_id":"x"`, 1), false},
		{"error missing param", ObservabilityID, "error", `{"error":{"message":"m","type":"t","code":null}}`, false},
		{"terminal chunk with metadata", InferenceID, "stream_chunk", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"metadata":{"performance":{"latency":` + summary + `,"prompt_tokens":3,"completion_tokens":3,"ttft_ms":5,"total_latency_ms":400,"decode_tokens_per_sec":6.6,"finish_reason":"stop","adapter_used":"base","prefix_cache":` + hit + `,"constraint":null}}}`, true},
		{"terminal chunk of a constrained request", InferenceID, "stream_chunk", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"metadata":{"performance":{"latency":` + summary + `,"prompt_tokens":3,"completion_tokens":3,"ttft_ms":5,"total_latency_ms":400,"decode_tokens_per_sec":6.6,"finish_reason":"tool_calls","adapter_used":"base","prefix_cache":` + hit + `,"constraint":` + constraint + `}}}`, true},
		{"constraint of an unknown kind", ObservabilityID, "constraint_use", strings.Replace(constraint, `"tool_required"`, `"regex"`, 1), false},
		{"constraint without mask time", ObservabilityID, "constraint_use", strings.Replace(constraint, `"mask_ms":3.5,`, ``, 1), false},
		{"terminal chunk without constraint", InferenceID, "stream_chunk", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"metadata":{"performance":{"latency":` + summary + `,"prompt_tokens":3,"completion_tokens":3,"ttft_ms":5,"total_latency_ms":400,"decode_tokens_per_sec":6.6,"finish_reason":"stop","adapter_used":"base","prefix_cache":` + hit + `}}}`, false},
		{"terminal chunk with a broken summary", InferenceID, "stream_chunk", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"metadata":{"performance":{"latency":` + strings.Replace(summary, `"ttft_ms":5,`, ``, 1) + `,"prompt_tokens":3,"completion_tokens":3,"ttft_ms":5,"total_latency_ms":400,"decode_tokens_per_sec":6.6,"finish_reason":"stop","adapter_used":"base","prefix_cache":` + hit + `,"constraint":null}}}`, false},
		{"terminal chunk without prefix cache", InferenceID, "stream_chunk", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"metadata":{"performance":{"latency":` + summary + `,"prompt_tokens":3,"completion_tokens":3,"ttft_ms":5,"total_latency_ms":400,"decode_tokens_per_sec":6.6,"finish_reason":"stop","adapter_used":"base","constraint":null}}}`, false},
		{"content chunk with metadata", InferenceID, "content_chunk", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}],"metadata":{}}`, false},
		{"request", InferenceID, "chat_request", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"include_performance":null,"extra":1}`, true},
		{"request n=17", InferenceID, "chat_request", `{"model":"m","messages":[{"role":"user","content":"hi"}],"n":17}`, false},
		{"request n=2 with tools", InferenceID, "chat_request", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}],"n":2,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"auto"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Validate(tt.id, tt.def, []byte(tt.instance))
			if (err == nil) != tt.valid {
				t.Errorf("valid = %v, want %v (error: %v)", err == nil, tt.valid, err)
			}
		})
	}
}

// TestClosedObjects walks both documents: every object schema with
// properties is closed and, except the documented conditional keys and the
// open request, requires every property.
func TestClosedObjects(t *testing.T) {
	optional := map[string]bool{"usage": true, "metadata": true, "role": true, "tool_calls": true, "reasoning_content": true}
	// Keys optional in one object only, each documented there.
	optionalAt := map[string][]string{
		"/$defs/tool_call_delta":                     {"id", "type"},
		"/$defs/tool_call_delta/properties/function": {"name"},
		"/$defs/chat_completion/properties/metadata": {"choices"},
		"/$defs/response_object/properties/metadata": {"performance"},
	}
	// Objects open by contract: a Responses request's metadata is the
	// client's own string keys, echoed.
	open := map[string]bool{"/$defs/response_object/properties/metadata": true}
	for _, doc := range [][]byte{Inference(), Observability()} {
		var root map[string]any
		if err := json.Unmarshal(doc, &root); err != nil {
			t.Fatal(err)
		}
		var walk func(path string, n any)
		walk = func(path string, n any) {
			switch x := n.(type) {
			case map[string]any:
				if props, ok := x["properties"].(map[string]any); ok && !strings.Contains(path, "chat_request") && !strings.Contains(path, "/message") {
					if x["additionalProperties"] != false && !open[strings.TrimPrefix(path, root["$id"].(string))] {
						t.Errorf("%s: not closed", path)
					}
					req := map[string]bool{}
					for _, r := range x["required"].([]any) {
						req[r.(string)] = true
					}
					for k := range props {
						if !req[k] && !optional[k] && !slices.Contains(optionalAt[strings.TrimPrefix(path, root["$id"].(string))], k) {
							t.Errorf("%s: %q not required", path, k)
						}
					}
				}
				for k, c := range x {
					if k == "if" || k == "then" || k == "else" {
						continue // constraints on the closed object above, not objects of their own
					}
					walk(path+"/"+k, c)
				}
			case []any:
				for i, c := range x {
					walk(path+"/"+string(rune('0'+i%10)), c)
				}
			}
		}
		walk(root["$id"].(string), root)
	}
}

// TestTraceContractNames: every span name and attribute key of the trace
// contract document is a constant in telemetry/names*.go, so the two cannot
// drift apart silently.
func TestTraceContractNames(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "telemetry", "names*.go"))
	var src []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Skipf("%s not readable: %v", f, err)
		}
		src = append(src, b...)
	}
	if len(src) == 0 {
		t.Skip("telemetry/names.go not readable")
	}
	doc := TraceContract()
	var names []string
	for _, f := range bytes.Split(doc, []byte("`")) {
		s := string(f)
		if (strings.HasPrefix(s, "kiln.") || strings.HasPrefix(s, "gen_ai.")) && !strings.ContainsAny(s, " ,") {
			names = append(names, s)
		}
	}
	if len(names) < 20 {
		t.Fatalf("found only %d names in the trace contract", len(names))
	}
	for _, n := range names {
		// Templated keys end with a placeholder; check their prefix.
		key := n
		if i := strings.Index(key, "<"); i >= 0 {
			key = key[:i]
		}
		if !bytes.Contains(src, []byte(`"`+key)) {
			t.Errorf("trace contract name %q is not a constant in telemetry/names.go", n)
		}
	}
}
