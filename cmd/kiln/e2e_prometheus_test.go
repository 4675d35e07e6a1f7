package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The three queries of docs/latency-guide.md#prometheus, unchanged.
var seedQueries = map[string]string{
	"itl_p999":  `histogram_quantile(0.999, sum by (le) (rate(kiln_token_itl_seconds_bucket[5m])))`,
	"stalls":    `sum by (reason) (rate(kiln_token_stalls_total[5m]))`,
	"phase_p99": `histogram_quantile(0.99, sum by (phase, le) (rate(kiln_request_latency_phase_seconds_bucket[5m])))`,
}

type promResult struct {
	Status string `json:"status"`
	Data   struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// TestPrometheusScrape runs Debian's prometheus against kiln serve during a
// workload with a deliberate prefill stall and checks the seed queries
// through the Prometheus HTTP API.
func TestPrometheusScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	promBin := requireTool(t, "prometheus")
	// One large prefill chunk: the long prompt is prefilled in a single
	// cycle, stalling the decoding request's next gap.
	srv := startServe(t, "--prefill-chunk", "2048")
	target := strings.TrimPrefix(srv.URL, "http://")

	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: kiln
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	prom := exec.Command(promBin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr,
		"--log.level=warn")
	logs := &lockedBuffer{}
	prom.Stdout, prom.Stderr = logs, logs
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- prom.Wait() }()
	t.Cleanup(func() {
		_ = prom.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil && !t.Failed() {
				t.Logf("prometheus exit: %v", err)
			}
		case <-time.After(20 * time.Second):
			_ = prom.Process.Kill()
			t.Logf("prometheus killed: %v", <-done)
		}
		if t.Failed() {
			t.Logf("prometheus output:\n%s", logs.String())
		}
	})
	promURL := "http://" + promAddr

	query := func(q string) (promResult, error) {
		var r promResult
		resp, err := http.Get(promURL + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return r, err
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return r, err
		}
		if r.Status != "success" {
			return r, fmt.Errorf("status %s", r.Status)
		}
		return r, nil
	}
	// Wait until Prometheus has scraped the target at least once.
	waitFor(t, 60*time.Second, "prometheus to scrape kiln", func() bool {
		r, err := query(`up{job="kiln"}`)
		return err == nil && len(r.Data.Result) == 1 && r.Data.Result[0].Value[1] == "1"
	})

	srv.stallWorkload(t, stallPromptWords)

	// rate() needs two scrapes after the stall: poll until every query has
	// a result and the stall shows under actor_prefill.
	var last map[string]promResult
	waitFor(t, 60*time.Second, "the seed queries to return the stall", func() bool {
		last = map[string]promResult{}
		for name, q := range seedQueries {
			r, err := query(q)
			if err != nil || len(r.Data.Result) == 0 {
				return false
			}
			last[name] = r
		}
		for _, s := range last["stalls"].Data.Result {
			if s.Metric["reason"] == "actor_prefill" && s.Value[1] != "0" {
				return true
			}
		}
		return false
	})
	for name, r := range last {
		t.Logf("%s: %d series, first %v", name, len(r.Data.Result), r.Data.Result[0])
	}
	phases := map[string]bool{}
	for _, s := range last["phase_p99"].Data.Result {
		phases[s.Metric["phase"]] = true
	}
	for _, want := range []string{"prefill", "decode", "actor_queue"} {
		if !phases[want] {
			t.Errorf("per-phase p99 has no %q series; phases: %v", want, phases)
		}
	}
}

// waitFor polls cond every 250 ms until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
