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
// completed with its adapter.
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
}
