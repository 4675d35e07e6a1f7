package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/schemas"
)

// TestServeQwen35 serves the tiny Qwen3.5 Hugging Face directory (a hybrid
// of Gated DeltaNet and gated attention) as a user would: a streamed chat
// with include_performance (every chunk and timing event valid against the
// inference schema, one timing event per token, the summary on the
// terminal chunk), /health counting the recurrent state, then an SFT job
// on the model and a chat naming the adapter it wrote, which answers the
// trained reply.
func TestServeQwen35(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	model := sharedModelPath(t, "ref/tiny-qwen35.hf")
	srv := startServe(t, "--model", model, "--adapter-dir", t.TempDir(), "--threads", "2")
	if log := srv.log.String(); !strings.Contains(log, "vision tower") || !strings.Contains(log, "multi-token-prediction") {
		t.Errorf("the start-up log does not say the vision tower and the MTP layer were skipped:\n%s", log)
	}
	v, err := schemas.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	raw := srv.chat(ctx, t, map[string]any{"model": "tiny-qwen35.hf", "stream": true, "include_performance": true,
		"max_tokens": 8, "temperature": 0, "messages": []map[string]string{{"role": "user", "content": "Hello!"}}})
	chunks, timings, summary := 0, 0, false
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(data), &obj); err != nil {
			t.Fatalf("SSE data %q: %v", data, err)
		}
		def := "stream_chunk"
		if obj["object"] == "kiln.token_timing" {
			def = "token_timing_event"
			timings++
		} else {
			chunks++
		}
		if err := v.Validate(schemas.InferenceID, def, []byte(data)); err != nil {
			t.Errorf("%s %s: %v", def, data, err)
		}
		if meta, _ := obj["metadata"].(map[string]any); meta != nil {
			perf, _ := meta["performance"].(map[string]any)
			summary = summary || perf["latency"] != nil
		}
	}
	if timings != 8 || !summary || chunks < 8 {
		t.Errorf("stream: %d chunks, %d timing events, summary %v; want one timing event per token (8) and the summary", chunks, timings, summary)
	}

	var health struct {
		Engine struct {
			RecurrentBytes *int64 `json:"recurrent_bytes"`
		} `json:"engine"`
	}
	getJSON(t, srv.URL+"/health", &health)
	if health.Engine.RecurrentBytes == nil || *health.Engine.RecurrentBytes <= 0 {
		t.Errorf("/health engine.recurrent_bytes = %v, want the state the finished request left", health.Engine.RecurrentBytes)
	}

	question, answer := "What is the weather in Paris?", "Sunny and mild, with a light breeze."
	id := postSFT(t, srv.URL, map[string]any{
		"examples": []any{map[string]any{"messages": []map[string]string{
			{"role": "user", "content": question}, {"role": "assistant", "content": answer}}}},
		"config": map[string]any{"epochs": 40, "learning_rate": 3e-3, "lora_rank": 8, "lora_alpha": 16,
			"output_name": "paris", "auto_load": false, "seed": 7},
	})
	waitTrained(ctx, t, srv.URL, id)
	out := srv.chat(ctx, t, map[string]any{"model": "tiny-qwen35.hf", "adapter": "paris", "max_tokens": 24, "temperature": 0,
		"include_performance": true, "messages": []map[string]string{{"role": "user", "content": question}}})
	var resp struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Metadata struct {
			Performance struct {
				AdapterUsed string `json:"adapter_used"`
			} `json:"performance"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("adapter chat: %v: %s", err, out)
	}
	if got := resp.Choices[0].Message.Content; got != answer {
		t.Errorf("with the trained adapter the answer is %q, want %q", got, answer)
	}
	if got := resp.Metadata.Performance.AdapterUsed; got != "paris" {
		t.Errorf("adapter_used %q, want paris", got)
	}
	checkFollowUp(ctx, t, srv, question)
}

// checkFollowUp: a chat's second turn resumes from the recurrent-state
// checkpoint the first left (the prefix cache on a hybrid model): its
// cached tokens are the first turn's prompt and reply but the reply's last
// token, from source checkpoint. It runs with the trained adapter, whose
// reply is the text it was trained on, which the chat template renders
// back to the same tokens (a random model's bytes may not).
func checkFollowUp(ctx context.Context, t *testing.T, srv *serveProcess, question string) {
	t.Helper()
	turn := func(msgs []map[string]string) (string, map[string]any, map[string]any) {
		out := srv.chat(ctx, t, map[string]any{"model": "tiny-qwen35.hf", "adapter": "paris", "max_tokens": 24, "temperature": 0,
			"include_performance": true, "messages": msgs})
		var r struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
			Usage    map[string]any `json:"usage"`
			Metadata struct {
				Performance struct {
					PrefixCache map[string]any `json:"prefix_cache"`
				} `json:"performance"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(out, &r); err != nil || len(r.Choices) != 1 {
			t.Fatalf("chat: %v: %s", err, out)
		}
		return r.Choices[0].Message.Content, r.Usage, r.Metadata.Performance.PrefixCache
	}
	msgs := []map[string]string{{"role": "user", "content": question}}
	reply, usage1, _ := turn(msgs)
	msgs = append(msgs, map[string]string{"role": "assistant", "content": reply}, map[string]string{"role": "user", "content": "And the mountains?"})
	_, usage2, pc := turn(msgs)
	cached := usage2["prompt_tokens_details"].(map[string]any)["cached_tokens"].(float64)
	want := usage1["prompt_tokens"].(float64) + usage1["completion_tokens"].(float64) - 1
	if cached != want || pc["source"] != "checkpoint" {
		t.Errorf("second turn: cached_tokens %v (want %v: the first turn's prompt and reply but its last token), prefix_cache %v", cached, want, pc)
	}
}

// getJSON decodes the JSON body of a GET.
func getJSON(t *testing.T, url string, into any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d, %v", url, resp.StatusCode, err)
	}
}

// postSFT queues a training job and returns its id.
func postSFT(t *testing.T, url string, job map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(job)
	resp, err := http.Post(url+"/v1/train/sft", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		JobID string `json:"job_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != http.StatusOK || r.JobID == "" {
		t.Fatalf("POST /v1/train/sft: HTTP %d, %v, job %q", resp.StatusCode, err, r.JobID)
	}
	return r.JobID
}

// waitTrained polls the job until it completes.
func waitTrained(ctx context.Context, t *testing.T, url, id string) {
	t.Helper()
	for {
		var st struct {
			State  string    `json:"state"`
			Error  *string   `json:"error"`
			Losses []float64 `json:"losses"`
		}
		getJSON(t, url+"/v1/train/status/"+id, &st)
		switch st.State {
		case "completed":
			t.Logf("trained: %d steps, loss %.3g -> %.3g", len(st.Losses), st.Losses[0], st.Losses[len(st.Losses)-1])
			return
		case "failed":
			t.Fatalf("training job failed: %v", *st.Error)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("training job still %s", st.State)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
