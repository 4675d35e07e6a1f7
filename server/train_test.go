package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trainExample is a one-turn conversation for the SFT route.
func trainExample(user, assistant string) map[string]any {
	return map[string]any{"messages": []map[string]any{
		{"role": "user", "content": user}, {"role": "assistant", "content": assistant},
	}}
}

// withTraining points the adapter and training data directories at
// temporary ones.
func withTraining(t *testing.T, dataDir string) harnessOption {
	adapters := t.TempDir()
	return withConfig(func(c *Config) {
		c.AdapterDir = adapters
		c.TrainDataDir = dataDir
	})
}

// submitSFT posts a job and returns its id (failing the test unless 200).
func (h *harness) submitSFT(t *testing.T, body map[string]any) sftReply {
	t.Helper()
	status, _, out := h.do(http.MethodPost, "/v1/train/sft", body, nil)
	if status != http.StatusOK {
		t.Fatalf("POST /v1/train/sft: %d %s", status, out)
	}
	var r sftReply
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if r.State != jobQueued || !strings.HasPrefix(r.JobID, "train-") {
		t.Fatalf("reply %+v, want a queued train- job", r)
	}
	return r
}

// waitJob polls the job's status until done(job) or the deadline.
func (h *harness) waitJob(t *testing.T, id string, done func(jobJSON) bool) jobJSON {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var j jobJSON
		h.getJSON("/v1/train/status/"+id, &j)
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s at step %d after 2 minutes", id, j.State, j.Step)
		}
		time.Sleep(20 * time.Millisecond) // polling a job's progress
	}
}

func finished(j jobJSON) bool { return j.State == jobCompleted || j.State == jobFailed }

// TestTrainSFTValidation: every bad body is a 400 naming the parameter,
// and nothing is queued.
func TestTrainSFTValidation(t *testing.T) {
	data := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	good := `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"the cat"}]}` + "\n"
	for _, f := range []string{outside, filepath.Join(data, "ok.jsonl")} {
		if err := os.WriteFile(f, []byte(good), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(data, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, withTraining(t, data))
	t.Cleanup(h.srv.stopTraining)
	ex := []any{trainExample("hello", "the cat sat")}
	for _, tc := range []struct {
		name  string
		body  string
		param string
		code  string
	}{
		{"unknown field", `{"examples":[],"bogus":1}`, "", "unknown_field"},
		{"unknown config field", `{"examples":` + toJSON(t, ex) + `,"config":{"lr":1}}`, "", "unknown_field"},
		{"unknown message field", `{"examples":[{"messages":[{"role":"user","content":"a","x":1}]}]}`, "", "unknown_field"},
		{"empty examples", `{"examples":[]}`, "examples", "invalid_value"},
		{"no examples", `{}`, "examples", "invalid_value"},
		{"no assistant turn", `{"examples":[{"messages":[{"role":"user","content":"hi"}]}]}`, "examples[0].messages", "invalid_value"},
		{"rank 0", `{"examples":` + toJSON(t, ex) + `,"config":{"lora_rank":0}}`, "config", "invalid_value"},
		{"negative learning rate", `{"examples":` + toJSON(t, ex) + `,"config":{"learning_rate":-0.001}}`, "config", "invalid_value"},
		{"unknown target", `{"examples":` + toJSON(t, ex) + `,"config":{"target_modules":["q","lm_head"]}}`, "config", "invalid_value"},
		{"unknown optimizer", `{"examples":` + toJSON(t, ex) + `,"config":{"optimizer":{"kind":"lion"}}}`, "config", "invalid_value"},
		{"bad output name", `{"examples":` + toJSON(t, ex) + `,"config":{"output_name":"../up"}}`, "config.output_name", "invalid_adapter_name"},
		{"dataset outside the data dir", `{"dataset_path":` + toJSON(t, outside) + `}`, "dataset_path", "dataset_path_outside_data_dir"},
		{"dataset climbing out", `{"dataset_path":"../x.jsonl"}`, "dataset_path", "dataset_path_outside_data_dir"},
		{"dataset through a symlink out", `{"dataset_path":"link.jsonl"}`, "dataset_path", "dataset_path_outside_data_dir"},
		{"dataset missing", `{"dataset_path":"nope.jsonl"}`, "dataset_path", "dataset_not_found"},
		{"examples and dataset", `{"dataset_path":"ok.jsonl","examples":` + toJSON(t, ex) + `}`, "dataset_path", "invalid_value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := h.do(http.MethodPost, "/v1/train/sft", tc.body, nil)
			var e struct {
				Error struct{ Param, Code *string }
			}
			_ = json.Unmarshal(body, &e)
			if status != http.StatusBadRequest || e.Error.Code == nil || *e.Error.Code != tc.code ||
				(tc.param != "" && (e.Error.Param == nil || *e.Error.Param != tc.param)) {
				t.Errorf("%d %s; want 400 %s on %q", status, body, tc.code, tc.param)
			}
		})
	}
	var q trainQueueBody
	h.getJSON("/v1/train/queue", &q)
	if q.Running != nil || len(q.Queued) != 0 || len(q.Completed) != 0 {
		t.Errorf("bad bodies left jobs behind: %+v", q)
	}
	// A dataset under the directory is accepted.
	r := h.submitSFT(t, map[string]any{"dataset_path": "ok.jsonl", "config": map[string]any{"epochs": 1, "auto_load": false}})
	if j := h.waitJob(t, r.JobID, finished); j.State != jobCompleted || len(j.Losses) != 1 {
		t.Errorf("dataset job: %+v", j)
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
