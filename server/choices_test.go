package server

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/kiln-ai/kiln/schemas"
)

// validator checks bodies against the published schemas.
func validator(t *testing.T) func(def string, body []byte) {
	t.Helper()
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return func(def string, body []byte) {
		t.Helper()
		if err := v.Validate(schemas.InferenceID, def, body); err != nil {
			t.Errorf("%s does not match: %v\n%s", def, err, body)
		}
	}
}

type wireLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
	Top     []struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
		Bytes   []int   `json:"bytes"`
	} `json:"top_logprobs"`
}

type wireChoice struct {
	Index   int `json:"index"`
	Message struct {
		Content *string `json:"content"`
	} `json:"message"`
	Logprobs *struct {
		Content []wireLogprob `json:"content"`
	} `json:"logprobs"`
	FinishReason string `json:"finish_reason"`
}

type wireCompletion struct {
	Choices []wireChoice `json:"choices"`
	Usage   struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Metadata *struct {
		Performance map[string]any `json:"performance"`
		Choices     []struct {
			Index       int            `json:"index"`
			Performance map[string]any `json:"performance"`
		} `json:"choices"`
	} `json:"metadata"`
}

// checkLogprob: a token's entry is a log probability with its bytes, and
// its alternatives are the most likely first, k of them.
func checkLogprob(t *testing.T, lp wireLogprob, k int) {
	t.Helper()
	if lp.Logprob > 0 || math.IsNaN(lp.Logprob) {
		t.Errorf("logprob %v of %q", lp.Logprob, lp.Token)
	}
	if string(bytesOf(lp.Bytes)) != lp.Token {
		t.Errorf("bytes %v are not the token %q", lp.Bytes, lp.Token)
	}
	if len(lp.Top) != k {
		t.Fatalf("%d top_logprobs, want %d", len(lp.Top), k)
	}
	for i := 1; i < len(lp.Top); i++ {
		if lp.Top[i].Logprob > lp.Top[i-1].Logprob {
			t.Errorf("top_logprobs not most likely first: %v", lp.Top)
		}
	}
	if k > 0 && lp.Logprob > lp.Top[0].Logprob+1e-6 {
		t.Errorf("the chosen token %q (%v) is likelier than the top alternative %v", lp.Token, lp.Logprob, lp.Top[0].Logprob)
	}
}

func bytesOf(v []int) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return b
}

// TestChatLogprobs: logprobs lists every text token of the completion, in
// order, with its alternatives; greedy decoding picks the most likely
// token, so each chosen token is its top alternative; the stream carries
// the same entries one per chunk.
func TestChatLogprobs(t *testing.T) {
	h := newHarness(t)
	check := validator(t)
	body := h.chatBody(map[string]any{"logprobs": true, "top_logprobs": 3, "max_tokens": 12})
	status, _, raw := h.do(http.MethodPost, chatPath, body, nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, raw)
	}
	check("chat_completion", raw)
	var resp wireCompletion
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	c := resp.Choices[0]
	if c.Logprobs == nil || len(c.Logprobs.Content) == 0 {
		t.Fatalf("no logprobs: %s", raw)
	}
	var text strings.Builder
	for _, lp := range c.Logprobs.Content {
		checkLogprob(t, lp, 3)
		if lp.Token != lp.Top[0].Token {
			t.Errorf("greedy chose %q, but the most likely token is %q", lp.Token, lp.Top[0].Token)
		}
		text.WriteString(lp.Token)
	}
	if got := text.String(); got != *c.Message.Content {
		t.Errorf("the tokens spell %q, the content is %q", got, *c.Message.Content)
	}

	body["stream"] = true
	_, _, sraw := h.do(http.MethodPost, chatPath, body, nil)
	p := parseStream(t, sraw)
	var streamed []wireLogprob
	for i, r := range p.raw {
		check("stream_chunk", r)
		if p.order[i] != "content" {
			continue
		}
		var ch struct {
			Choices []struct {
				Logprobs *struct {
					Content []wireLogprob `json:"content"`
				} `json:"logprobs"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(r, &ch); err != nil {
			t.Fatal(err)
		}
		if lp := ch.Choices[0].Logprobs; lp != nil {
			if len(lp.Content) != 1 {
				t.Fatalf("a chunk carries %d entries, want 1", len(lp.Content))
			}
			streamed = append(streamed, lp.Content[0])
		}
	}
	if len(streamed) != len(c.Logprobs.Content) {
		t.Fatalf("streamed %d entries, the whole response %d", len(streamed), len(c.Logprobs.Content))
	}
	for i := range streamed {
		if a, b := streamed[i], c.Logprobs.Content[i]; a.Token != b.Token || math.Abs(a.Logprob-b.Logprob) > 1e-5 {
			t.Errorf("entry %d: streamed %q %v, whole %q %v", i, a.Token, a.Logprob, b.Token, b.Logprob)
		}
	}
}

// TestLogprobsIgnoreSamplingControls: the reported distribution is the
// model's: a temperature and a logit bias change the choice, not the
// numbers of the same token in the same context.
func TestLogprobsIgnoreSamplingControls(t *testing.T) {
	h := newHarness(t)
	get := func(extra map[string]any) wireLogprob {
		extra["logprobs"], extra["top_logprobs"], extra["max_tokens"] = true, 5, 1
		status, _, raw := h.do(http.MethodPost, chatPath, h.chatBody(extra), nil)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, raw)
		}
		var resp wireCompletion
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0].Logprobs.Content[0]
	}
	greedy := get(map[string]any{})
	hot := get(map[string]any{"temperature": 1.9, "seed": 3, "presence_penalty": 2})
	for i := range greedy.Top {
		if greedy.Top[i].Token != hot.Top[i].Token || math.Abs(greedy.Top[i].Logprob-hot.Top[i].Logprob) > 1e-5 {
			t.Errorf("alternative %d: %q %v at temperature 0, %q %v at 1.9", i, greedy.Top[i].Token, greedy.Top[i].Logprob, hot.Top[i].Token, hot.Top[i].Logprob)
		}
	}
}

// TestNChoices: n choices come back indexed, seeded choices differ from
// each other and repeat, usage counts the prompt once and every choice's
// tokens, and each choice has its performance object, where the choices
// after the first reuse the first one's prompt from the prefix cache.
func TestNChoices(t *testing.T) {
	h := newHarness(t)
	check := validator(t)
	body := h.chatBody(map[string]any{"n": 3, "temperature": 1, "seed": 11, "max_tokens": 8, "include_performance": true})
	get := func() (wireCompletion, []byte) {
		status, _, raw := h.do(http.MethodPost, chatPath, body, nil)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, raw)
		}
		check("chat_completion", raw)
		var resp wireCompletion
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatal(err)
		}
		return resp, raw
	}
	resp, raw := get()
	if len(resp.Choices) != 3 {
		t.Fatalf("%d choices: %s", len(resp.Choices), raw)
	}
	sum := 0
	texts := map[string]bool{}
	for i, c := range resp.Choices {
		if c.Index != i {
			t.Errorf("choice %d has index %d", i, c.Index)
		}
		texts[*c.Message.Content] = true
		sum += int(num(t, resp.Metadata.Choices[i].Performance["completion_tokens"]))
		if resp.Metadata.Choices[i].Index != i {
			t.Errorf("metadata.choices[%d].index = %d", i, resp.Metadata.Choices[i].Index)
		}
	}
	if len(texts) < 2 {
		t.Errorf("three seeded choices are all the same: %v", texts)
	}
	if resp.Usage.CompletionTokens != sum || resp.Usage.TotalTokens != resp.Usage.PromptTokens+sum {
		t.Errorf("usage %+v, the choices generated %d", resp.Usage, sum)
	}
	for i := 1; i < 3; i++ {
		pc := resp.Metadata.Choices[i].Performance["prefix_cache"].(map[string]any)
		if num(t, pc["cached_tokens"]) < 1 {
			t.Errorf("choice %d reused nothing of the prompt: %v", i, pc)
		}
	}
	again, _ := get()
	for i := range resp.Choices {
		if *again.Choices[i].Message.Content != *resp.Choices[i].Message.Content {
			t.Errorf("seeded choice %d differs between two runs", i)
		}
	}

	body["stream"] = true
	body["stream_options"] = map[string]any{"include_usage": true}
	_, _, sraw := h.do(http.MethodPost, chatPath, body, nil)
	p := parseStream(t, sraw)
	content := map[int]*strings.Builder{}
	finished := map[int]bool{}
	for i, r := range p.raw {
		if p.order[i] == "timing" {
			check("token_timing_event", r)
			continue
		}
		check("stream_chunk", r)
		var ch struct {
			Choices []struct {
				Index        int     `json:"index"`
				FinishReason *string `json:"finish_reason"`
				Delta        struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(r, &ch); err != nil {
			t.Fatal(err)
		}
		if p.order[i] == "usage" {
			if ch.Usage.CompletionTokens != sum {
				t.Errorf("streamed usage %d completion tokens, want %d", ch.Usage.CompletionTokens, sum)
			}
			continue
		}
		c := ch.Choices[0]
		if finished[c.Index] {
			t.Errorf("a chunk of choice %d after its terminal chunk", c.Index)
		}
		if c.FinishReason != nil {
			finished[c.Index] = true
			continue
		}
		if content[c.Index] == nil {
			content[c.Index] = &strings.Builder{}
		}
		content[c.Index].WriteString(c.Delta.Content)
	}
	for i := range 3 {
		if !finished[i] || content[i] == nil {
			t.Fatalf("choice %d: finished %v, content %v", i, finished[i], content[i])
		}
		if got := content[i].String(); got != *resp.Choices[i].Message.Content {
			t.Errorf("choice %d streamed %q, whole %q", i, got, *resp.Choices[i].Message.Content)
		}
	}
}

// TestLegacyLogprobsAndN: a legacy completion's logprobs are parallel
// arrays whose tokens spell the text at their offsets, and n gives n text
// choices.
func TestLegacyLogprobsAndN(t *testing.T) {
	h := newHarness(t)
	status, _, raw := h.do(http.MethodPost, completionsPath, map[string]any{
		"model": h.model.ID, "prompt": "Once upon a time", "max_tokens": 6, "logprobs": 2, "n": 2, "temperature": 0.8, "seed": 5,
	}, nil)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, raw)
	}
	var resp struct {
		Choices []struct {
			Index    int    `json:"index"`
			Text     string `json:"text"`
			Logprobs struct {
				Tokens        []string             `json:"tokens"`
				TokenLogprobs []float64            `json:"token_logprobs"`
				TopLogprobs   []map[string]float64 `json:"top_logprobs"`
				TextOffset    []int                `json:"text_offset"`
			} `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 2 {
		t.Fatalf("%d choices", len(resp.Choices))
	}
	for i, c := range resp.Choices {
		lp := c.Logprobs
		n := len(lp.Tokens)
		if n == 0 || len(lp.TokenLogprobs) != n || len(lp.TopLogprobs) != n || len(lp.TextOffset) != n {
			t.Fatalf("choice %d: arrays of %d, %d, %d, %d", i, n, len(lp.TokenLogprobs), len(lp.TopLogprobs), len(lp.TextOffset))
		}
		for j, tok := range lp.Tokens {
			if !strings.HasPrefix(c.Text[lp.TextOffset[j]:], tok) {
				t.Errorf("choice %d token %d %q is not at offset %d of %q", i, j, tok, lp.TextOffset[j], c.Text)
			}
			if len(lp.TopLogprobs[j]) != 2 || lp.TokenLogprobs[j] > 0 {
				t.Errorf("choice %d token %d: %v, top %v", i, j, lp.TokenLogprobs[j], lp.TopLogprobs[j])
			}
		}
	}
}
