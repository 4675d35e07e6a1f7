package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/internal/testshared"
)

// The agent client tests run examples/clients/agents/*.mjs, the SDKs
// agents are built on (the Vercel AI SDK, LangChain, the openai package),
// unmodified, against the built binary. Each script runs its cases and
// prints one JSON line; the test reads it, asserts the key values again,
// and names the server feature a failing case needs. The model is
// kiln-tiny, whose text is random words: what is checked is the protocol
// (a required or named tool_choice and a json_schema response format must
// yield arguments or a document that fits the schema), not the answers.

// agentPackages are the npm packages the scripts import, pinned in
// examples/clients/package.json.
var agentPackages = []string{
	"ai", "@ai-sdk/openai-compatible", "@ai-sdk/openai",
	"@langchain/openai", "@langchain/core", "openai", "zod", "@anthropic-ai/sdk",
}

// agentFeatures says what the server must support for a case of each
// feature, for the failure message.
var agentFeatures = map[string]string{
	"chat":            "plain chat completions",
	"tools":           "tools (function definitions, tool_calls in the reply)",
	"tool_choice":     "tool_choice required / named / none (a grammar-constrained tool call)",
	"tool_result":     "tool-result history (an assistant message with tool_calls, then role tool)",
	"response_format": "response_format json_schema (a grammar-constrained document)",
	"logprobs":        "logprobs with top_logprobs",
	"n":               "n > 1 (several choices)",
	"responses":       "the Responses API (POST /v1/responses)",
	"messages":        "Anthropic's Messages API (POST /v1/messages)",
}

// agentReport is the line a script prints.
type agentReport struct {
	Script string            `json:"script"`
	Passed int               `json:"passed"`
	Failed int               `json:"failed"`
	Cases  []json.RawMessage `json:"cases"`
}

// agentCase is one case of the report; Values holds all its fields (the
// key values the script recorded).
type agentCase struct {
	Name          string `json:"name"`
	Feature       string `json:"feature"`
	Pass          bool   `json:"pass"`
	Error         string `json:"error"`
	Status        int    `json:"status"`
	Code          string `json:"code"`
	ServerMessage string `json:"server_message"`
	Values        map[string]any
}

// requireAgentSDKs skips (fails in CI) when the pinned npm packages are
// not all installed under dir.
func requireAgentSDKs(t *testing.T, dir string) {
	t.Helper()
	for _, p := range agentPackages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(p), "package.json")); err != nil {
			msg := fmt.Sprintf("the npm package %s is not installed under examples/clients: run scripts/install-e2e", p)
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// runAgentScript runs one script against the server and returns its cases
// by name. A failing case still leaves the report on stdout (exit 1);
// anything else (no report, exit 2) fails the test.
func runAgentScript(t *testing.T, node, dir, script string, args ...string) map[string]agentCase {
	t.Helper()
	// The weather demo trains for a few minutes; the others take seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("agents", script)}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KILN_ACCESS_TOKEN=", "KILN_BASE_URL=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if failedCases := errors.As(err, &ee) && ee.ExitCode() == 1; err != nil && !failedCases {
		t.Fatalf("%s: %v\nstderr:\n%s\nstdout:\n%s", script, err, stderr.String(), stdout.String())
	}
	var rep agentReport
	if jerr := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &rep); jerr != nil {
		t.Fatalf("%s printed no JSON report: %v\nstdout:\n%s\nstderr:\n%s", script, jerr, stdout.String(), stderr.String())
	}
	if err != nil {
		// The one line naming the failed cases; each is reported below.
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 {
			t.Errorf("%s: exit 1 with %d lines on stderr, want one:\n%s", script, len(lines), stderr.String())
		}
	}
	cases := make(map[string]agentCase, len(rep.Cases))
	for _, raw := range rep.Cases {
		var c agentCase
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: case %s: %v", script, raw, err)
		}
		if err := json.Unmarshal(raw, &c.Values); err != nil {
			t.Fatalf("%s: case %s: %v", script, raw, err)
		}
		cases[c.Name] = c
	}
	if got := rep.Passed + rep.Failed; got != len(rep.Cases) {
		t.Errorf("%s: passed %d + failed %d != %d cases", script, rep.Passed, rep.Failed, len(rep.Cases))
	}
	return cases
}

// agentWant is a case the test expects a script to run, the feature it
// needs and what its values must show.
type agentWant struct {
	name    string
	feature string
	check   func(t *testing.T, v map[string]any)
}

// agentScript is a script and the cases it must run.
type agentScript struct {
	script string
	want   []agentWant
}

func TestAgentClients(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	node := requireTool(t, "node")
	dir := filepath.Join(repoRoot(t), "examples", "clients")
	requireAgentSDKs(t, dir)
	const token = "e2e-agents"
	srv := startServeEnv(t, []string{"KILN_ACCESS_TOKEN=" + token})
	checkAgentScripts(t, node, dir, srv.URL, token)
}

// TestWeatherDemo runs the weather demo (examples/clients/agents/
// weather-demo.mjs) against the binary: an online SFT job teaches
// kiln-tiny to call get_weather, then an unmodified AI SDK agent loop
// under tool_choice auto gets the call, runs the tool and gets an answer
// that uses its result. It trains for about 120 steps, too slow beside
// the race detector's load: scripts/test runs it in a step of its own.
func TestWeatherDemo(t *testing.T) {
	if testing.Short() || testshared.Race {
		t.Skip("trains kiln-tiny for about 120 steps: not under -short or the race detector (scripts/test runs it without)")
	}
	node := requireTool(t, "node")
	dir := filepath.Join(repoRoot(t), "examples", "clients")
	requireAgentSDKs(t, dir)
	srv := startServe(t, "--adapter-dir", t.TempDir())
	cases := runAgentScript(t, node, dir, "weather-demo.mjs", "--url", srv.URL, "--model", "kiln-tiny")
	for _, name := range []string{"train", "agent-loop"} {
		c, ok := cases[name]
		if !ok {
			t.Fatalf("the demo ran no case %q", name)
		}
		if !c.Pass {
			t.Fatalf("%s: %s (values %v)", name, c.Error, c.Values)
		}
		t.Logf("%s: %v", name, c.Values)
	}
	if city := cases["agent-loop"].Values["city"]; city != "Paris" {
		t.Errorf("the tool ran for %v, want Paris", city)
	}
}

// agentScripts is every script and the cases it must run.
func agentScripts() []agentScript {
	return []agentScript{
		{"ai-sdk.mjs", []agentWant{
			{"generateText/plain", "chat", wantText("text")},
			{"streamText/plain", "chat", wantText("text")},
			{"openai-provider/plain", "chat", wantText("text")},
			{"generateText/toolChoice-required", "tool_choice", wantCalls("")},
			{"generateText/toolChoice-named", "tool_choice", wantCalls("get_weather")},
			{"generateText/toolChoice-auto", "tools", nil},
			{"generateText/toolChoice-none", "tool_choice", wantText("text")},
			{"streamText/toolChoice-required", "tool_choice", wantCalls("")},
			{"generateText/tool-result-loop", "tool_result", allOf(wantCalls("get_weather"), wantText("text"), wantToolMessages)},
			{"generateObject/nested", "response_format", wantForecast},
			{"streamObject/nested", "response_format", wantForecast},
		}},
		{"langchain.mjs", []agentWant{
			{"invoke/plain", "chat", wantText("content")},
			{"stream/plain", "chat", wantText("content")},
			{"bindTools/tool_choice-any", "tool_choice", wantCalls("get_weather")},
			{"bindTools/tool_choice-required", "tool_choice", wantCalls("get_weather")},
			{"bindTools/tool_choice-named", "tool_choice", wantCalls("get_weather")},
			{"stream/bindTools-required", "tool_choice", wantCalls("get_weather")},
			{"invoke/tool-result-round-trip", "tool_result", allOf(wantCalls("get_weather"), wantText("content"), wantToolMessages)},
			{"withStructuredOutput/jsonSchema", "response_format", wantForecast},
			{"withStructuredOutput/functionCalling", "tool_choice", wantForecast},
		}},
		{"openai-sdk.mjs", []agentWant{
			{"chat/plain", "chat", wantText("content")},
			{"logprobs/non-streamed", "logprobs", wantLogprobs},
			{"logprobs/streamed", "logprobs", wantLogprobs},
			{"n/non-streamed", "n", wantTwoChoices},
			{"n/streamed", "n", wantTwoChoices},
			{"tool-calls/required-non-streamed", "tool_choice", wantCalls("get_weather")},
			{"tool-calls/required-streamed", "tool_choice", wantCalls("get_weather")},
			{"tool-calls/tool-result-round-trip", "tool_result", wantText("content")},
			{"response_format/json_schema-non-streamed", "response_format", wantForecast},
			{"response_format/json_schema-streamed", "response_format", wantForecast},
			{"parse/zodResponseFormat", "response_format", wantForecast},
			{"parse/zodFunction", "tool_choice", wantArgs},
		}},
		{"responses.mjs", []agentWant{
			{"openai/create-plain", "responses", wantText("text")},
			{"openai/create-streamed", "responses", wantText("text")},
			{"openai/tool-required", "tool_choice", wantCalls("get_weather")},
			{"openai/tool-required-streamed", "tool_choice", wantCalls("get_weather")},
			{"openai/tool-result-round-trip", "tool_result", allOf(wantCalls("get_weather"), wantText("text"))},
			{"openai/json_schema", "response_format", wantForecast},
			{"openai/json_schema-streamed", "response_format", wantForecast},
			{"openai/parse-zodTextFormat", "response_format", wantForecast},
			{"openai/logprobs", "logprobs", wantLogprobs},
			{"ai-sdk/generateText", "responses", wantText("text")},
			{"ai-sdk/streamText", "responses", wantText("text")},
			{"ai-sdk/generateObject", "response_format", wantForecast},
			{"ai-sdk/tool-loop", "tool_result", allOf(wantCalls("get_weather"), wantText("text"), wantToolMessages)},
		}},
		{"anthropic.mjs", []agentWant{
			{"create/plain", "messages", wantText("text")},
			{"stream/plain", "messages", wantText("text")},
			{"create/stop_sequences", "messages", wantValue("stop_reason", "stop_sequence")},
			{"create/tool-any", "tool_choice", wantCalls("get_weather")},
			{"stream/tool-named", "tool_choice", wantCalls("get_weather")},
			{"tool-result-round-trip", "tool_result", allOf(wantCalls("get_weather"), wantText("text"), wantToolMessages)},
			{"countTokens", "messages", nil},
			{"error/shape", "messages", wantValue("type", "invalid_request_error")},
		}},
	}
}

// wantValue checks that the case recorded key with the value want.
func wantValue(key, want string) func(*testing.T, map[string]any) {
	return func(t *testing.T, v map[string]any) {
		t.Helper()
		if got, _ := v[key].(string); got != want {
			t.Errorf("%s = %v, want %q", key, v[key], want)
		}
	}
}

// checkAgentScripts runs every script against the server at url and
// checks each case it expects.
func checkAgentScripts(t *testing.T, node, dir, url, token string) {
	for _, s := range agentScripts() {
		t.Run(strings.TrimSuffix(s.script, ".mjs"), func(t *testing.T) {
			cases := runAgentScript(t, node, dir, s.script, "--url", url, "--token", token, "--model", "kiln-tiny")
			for _, w := range s.want {
				t.Run(w.name, func(t *testing.T) {
					c, ok := cases[w.name]
					if !ok {
						t.Fatalf("%s ran no case %q", s.script, w.name)
					}
					delete(cases, w.name)
					if c.Feature != w.feature {
						t.Errorf("feature %q, want %q", c.Feature, w.feature)
					}
					if !c.Pass {
						t.Fatalf("%s\n(rerun it alone: cd examples/clients && node agents/%s --case %s --url URL)", agentFailure(c), s.script, w.name)
					}
					if w.check != nil {
						w.check(t, c.Values)
					}
				})
			}
			for name := range cases {
				t.Errorf("%s ran a case %q the test does not know: add it to the table", s.script, name)
			}
		})
	}
}

// agentFailure says why a case failed and what server feature it needs;
// a refusal (HTTP 400 unsupported_parameter, or a field the server does
// not decode yet) reads as the missing feature.
func agentFailure(c agentCase) string {
	need := agentFeatures[c.Feature]
	if need == "" {
		need = c.Feature
	}
	if c.Status >= 400 && c.Status < 500 {
		return fmt.Sprintf("the server refused it (does it support %s yet?): %s", need, c.Error)
	}
	shown := make(map[string]any, len(c.Values))
	for k, v := range c.Values {
		if !slices.Contains([]string{"name", "feature", "pass", "error", "ms"}, k) {
			shown[k] = v
		}
	}
	b, _ := json.Marshal(shown)
	return fmt.Sprintf("%s is wrong (the case needs %s): %s\nvalues: %s", c.Name, need, c.Error, b)
}

func allOf(checks ...func(*testing.T, map[string]any)) func(*testing.T, map[string]any) {
	return func(t *testing.T, v map[string]any) {
		t.Helper()
		for _, c := range checks {
			c(t, v)
		}
	}
}

func wantText(key string) func(*testing.T, map[string]any) {
	return func(t *testing.T, v map[string]any) {
		t.Helper()
		if s, _ := v[key].(string); s == "" {
			t.Errorf("%s = %v, want text", key, v[key])
		}
	}
}

// wantCalls checks the calls a constrained case recorded: get_weather
// (or, named "", any of the ai-sdk script's two tools) with arguments in
// the schema.
func wantCalls(named string) func(*testing.T, map[string]any) {
	return func(t *testing.T, v map[string]any) {
		t.Helper()
		calls, _ := v["calls"].([]any)
		if len(calls) == 0 {
			t.Fatalf("no calls: %v", v)
		}
		for i, raw := range calls {
			call, _ := raw.(map[string]any)
			tool, _ := call["tool"].(string)
			args, _ := call["args"].(map[string]any)
			switch {
			case named != "" && tool != named:
				t.Errorf("calls[%d] to %q, want %q", i, tool, named)
			case tool == "get_weather":
				checkWeatherArgs(t, args)
			case tool == "get_time":
				if z, _ := args["zone"].(string); !slices.Contains([]string{"utc", "cet", "pst"}, z) {
					t.Errorf("calls[%d] zone %v outside the enum", i, args["zone"])
				}
			default:
				t.Errorf("calls[%d] to an unknown tool %q", i, tool)
			}
		}
	}
}

func wantArgs(t *testing.T, v map[string]any) {
	t.Helper()
	if v["tool"] != "get_weather" {
		t.Errorf("tool %v, want get_weather", v["tool"])
	}
	args, _ := v["args"].(map[string]any)
	checkWeatherArgs(t, args)
}

func checkWeatherArgs(t *testing.T, args map[string]any) {
	t.Helper()
	if len(args) != 2 {
		t.Errorf("arguments %v, want exactly city and unit", args)
	}
	if city, ok := args["city"].(string); !ok || len(city) > 16 {
		t.Errorf("city %v, want a string of at most 16 bytes", args["city"])
	}
	if u, _ := args["unit"].(string); !slices.Contains([]string{"celsius", "fahrenheit"}, u) {
		t.Errorf("unit %v outside the enum", args["unit"])
	}
}

func wantToolMessages(t *testing.T, v map[string]any) {
	t.Helper()
	if n, _ := v["tool_messages"].(float64); n < 1 {
		t.Errorf("tool_messages = %v, want at least one tool message sent back", v["tool_messages"])
	}
}

// wantForecast checks the nested document: an object with an enum and
// one or two days, each with enums.
func wantForecast(t *testing.T, v map[string]any) {
	t.Helper()
	obj, _ := v["object"].(map[string]any)
	if obj == nil {
		t.Fatalf("no object: %v", v)
	}
	if u, _ := obj["unit"].(string); !slices.Contains([]string{"celsius", "fahrenheit"}, u) {
		t.Errorf("unit %v outside the enum", obj["unit"])
	}
	days, _ := obj["days"].([]any)
	if len(days) < 1 || len(days) > 2 {
		t.Errorf("days %v, want one or two", obj["days"])
	}
	for i, raw := range days {
		d, _ := raw.(map[string]any)
		if day, _ := d["day"].(string); !slices.Contains([]string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}, day) {
			t.Errorf("days[%d].day %v outside the enum", i, d["day"])
		}
		if sky, _ := d["sky"].(string); !slices.Contains([]string{"sunny", "cloudy", "rain", "snow"}, sky) {
			t.Errorf("days[%d].sky %v outside the enum", i, d["sky"])
		}
	}
}

func wantLogprobs(t *testing.T, v map[string]any) {
	t.Helper()
	if n, _ := v["tokens"].(float64); n < 1 {
		t.Errorf("tokens = %v, want logprobs for at least one token", v["tokens"])
	}
	first, _ := v["first"].(map[string]any)
	if lp, ok := first["logprob"].(float64); !ok || lp > 0 {
		t.Errorf("first logprob %v, want a number <= 0", first["logprob"])
	}
	if top, _ := first["top"].([]any); len(top) != 3 {
		t.Errorf("first token's top_logprobs %v, want 3", first["top"])
	}
}

func wantTwoChoices(t *testing.T, v map[string]any) {
	t.Helper()
	choices, _ := v["choices"].([]any)
	var idx []float64
	for _, raw := range choices {
		c, _ := raw.(map[string]any)
		i, _ := c["index"].(float64)
		idx = append(idx, i)
	}
	slices.Sort(idx)
	if !slices.Equal(idx, []float64{0, 1}) {
		t.Errorf("choice indexes %v, want 0 and 1", idx)
	}
	usage, _ := v["usage"].(map[string]any)
	if n, _ := usage["completion_tokens"].(float64); n < 2 {
		t.Errorf("usage %v: want completion_tokens counting both choices", usage)
	}
}
