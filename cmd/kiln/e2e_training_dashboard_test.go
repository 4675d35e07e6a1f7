package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDashboardTraining: a training job submitted to a running `kiln
// serve` appears in the dashboard's training panel, which draws its loss
// curve on a canvas (pixels drawn, no chart library) and shows the job
// completed with its adapter; the Maintenance panel lists the job as one
// row for its four steps.
func TestDashboardTraining(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	wd := startWebDriver(t)
	srv := startServe(t, "--adapter-dir", t.TempDir())
	wd.navigate(srv.URL + "/ui")
	defer wd.screenshot(filepath.Join(repoRoot(t), "e2e-artifacts", "dashboard-training.png"))
	wd.waitVisible("#training-empty")

	body, _ := json.Marshal(map[string]any{
		"examples": []any{map[string]any{"messages": []map[string]string{
			{"role": "user", "content": "hello there"}, {"role": "assistant", "content": "the cat sat"}}}},
		"config": map[string]any{"epochs": 4, "lora_rank": 2, "output_name": "panel", "auto_load": false},
	})
	resp, err := http.Post(srv.URL+"/v1/train/sft", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/train/sft: %d", resp.StatusCode)
	}

	wd.waitFor(60*time.Second, "the completed job in the training panel", func() bool {
		row, ok := wd.visibleText("#training-rows tr")
		return ok && strings.Contains(row, "completed") && strings.Contains(row, "4/4") && strings.Contains(row, "panel")
	})
	wd.waitVisible("#training-curve")
	if got := wd.textOf("#training-curve-title"); !strings.Contains(got, "4/4 steps") {
		t.Errorf("curve title %q, want the job's 4/4 steps", got)
	}
	// Pixels of the curve's colour: the polyline was drawn.
	n, err := strconv.Atoi(wd.script(`const c = document.getElementById("training-canvas");
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		let n = 0;
		for (let i = 0; i < d.length; i += 4) if (d[i+2] > 150 && d[i] < 120 && d[i+3] > 0) n++;
		return String(n);`))
	if err != nil || n < 50 {
		t.Errorf("loss curve pixels: %d (%v), want a drawn polyline", n, err)
	}

	// The Maintenance panel lists the job once, for all its steps.
	wd.waitFor(20*time.Second, "the training job's one Maintenance row", func() bool {
		rows := wd.findAll(`#maintenance-rows tr[data-kind="training_job"]`)
		return len(rows) == 1 && strings.Contains(wd.text(rows[0]), "4 steps done")
	})
	row := wd.find(`#maintenance-rows tr[data-kind="training_job"]`)
	if text := wd.text(row); !strings.Contains(text, "Training job") || !strings.Contains(text, "4 steps over") {
		t.Errorf("the training job's Maintenance row %q, want its kind and the job's summary", text)
	}
	if id := wd.attr(row, "id"); !strings.HasPrefix(id, "maintenance-op-") {
		t.Errorf("the training job's Maintenance row has id %q, want its operation's anchor", id)
	}
	if n := len(wd.findAll(`#maintenance-rows tr[data-kind="training_step"]`)); n != 0 {
		t.Errorf("the Maintenance panel lists %d training steps beside their job", n)
	}
	checkNoFloatNoise(t, wd)
}
