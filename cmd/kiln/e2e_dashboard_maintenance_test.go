package main

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The dashboard's maintenance surfaces, against a fake API: a stalled
// gap's blockers name the maintenance operation and link to its row in the
// Maintenance panel, the reason sentences name the operation's setting,
// a training job is one Maintenance row, the Training panel shows what a
// running or swapping job is doing, and no number is printed with float
// noise.

const (
	fakeJobID     = "train-0123456789abcdef"
	fakeStepText  = "training step 3 of 4, job " + fakeJobID + ", 212 tokens, loss 7.27"
	fakeTrimText  = "trim, freed 180.0 MB (rss 400.0 MB -> 220.0 MB)"
	fakeResizeTxt = "KV resize, grow 8192 -> 16384 tokens (4 -> 8 slots)"
)

// floatNoise is a decimal with more places than any dashboard prints.
var floatNoise = regexp.MustCompile(`\d\.\d{5,}`)

// fakeOperation is a diagnosis blocker's operation (schemas:
// diagnosis_operation): panel is its Maintenance panel row (a step's job).
func fakeOperation(id, panel int, kind, reason, summary string) map[string]any {
	return map[string]any{"id": id, "kind": kind, "reason": reason, "summary": summary, "outcome": "ok", "panel_id": panel}
}

func fakeBlocker(kind string, op any, startMs, durationMs float64) map[string]any {
	return map[string]any{"kind": kind, "operation": op, "start_offset_ms": startMs, "duration_ms": durationMs}
}

// fakeMaintenance is GET /v1/maintenance/recent with a trim (id 9), a
// running training job of three steps so far (id 5: one row for all its
// steps) and a KV resize (id 3), some of its numbers with float noise.
func fakeMaintenance() map[string]any {
	return map[string]any{"object": "kiln.maintenance.recent", "operations": []any{
		map[string]any{"id": 9, "kind": "trim", "reason": "maintenance", "start": "2026-12-01T18:33:40.120Z", "duration_ms": 260.00000000000006,
			"running": false, "outcome": "reclaimed", "summary": fakeTrimText, "hold_ms": 259.90000000000003, "steps": 0},
		map[string]any{"id": 5, "kind": "training_job", "reason": "training", "start": "2026-12-01T18:33:30.000Z", "duration_ms": nil,
			"running": true, "outcome": "", "summary": fakeStepText, "hold_ms": 2715.3000000000002, "steps": 3},
		map[string]any{"id": 3, "kind": "resize", "reason": "maintenance", "start": "2026-12-01T18:33:20.500Z", "duration_ms": 0.10284748999999999,
			"running": false, "outcome": "ok", "summary": fakeResizeTxt + "; p99 0.10284748999999999 ms", "hold_ms": 0.09572399999999999, "steps": 0},
	}}
}

// fakeConfig is the part of GET /v1/config the diagnosis's sentences read.
func fakeConfig() map[string]any {
	return map[string]any{"memory_reclaim": "on-demand", "maintenance_slice_ms": 50,
		"engine": map[string]any{"kv_budget": 8192, "kv_max_tokens": 65536}}
}

// fakeMaintenanceDiagnosis is a 40-token request that waited for admission
// behind a KV resize and stalled three times: token 10 on a training step
// (named as an operation and as the lock wait's holder), token 20 on a
// trim (named only as the lock wait's holder) and token 30 on a lock wait
// whose operation is no longer known.
func fakeMaintenanceDiagnosis(id string) (rec, detail map[string]any) {
	step := fakeOperation(12, 5, "training_step", "training", fakeStepText)
	trim := fakeOperation(9, 9, "trim", "maintenance", fakeTrimText)
	resize := fakeOperation(3, 3, "resize", "maintenance", fakeResizeTxt)
	stalled := map[int]struct {
		gap      float64
		reason   string
		blockers []any
	}{
		10: {905.0000000000001, "training", []any{fakeBlocker("gpu_lock_wait", step, 90, 910.2), fakeBlocker("operation", step, 91, 905.0000000000001)}},
		20: {270, "trim", []any{fakeBlocker("gpu_lock_wait", trim, 1300, 262)}},
		30: {300, "gpu_lock_wait", []any{fakeBlocker("gpu_lock_wait", nil, 1500, 290), fakeBlocker("operation", nil, 1510, 120)}},
	}
	var tokens, stalls []any
	ready := 140.0
	for i := range 40 {
		reason, gap := any("actor_decode"), 4.0
		if s, ok := stalled[i]; ok {
			reason, gap = s.reason, s.gap
			stalls = append(stalls, map[string]any{"token_index": i, "gap_ms": gap, "reason": reason, "candidate_ms": gap - 5, "blockers": s.blockers})
		}
		block := any(gap * 0.9)
		if i == 0 {
			reason, block, gap = nil, nil, 0
		}
		ready += gap
		tokens = append(tokens, map[string]any{"object": "kiln.token_timing", "source": "batching_engine",
			"token_index": i, "token_id": 100 + i, "ready_ms": ready, "producer_delivered_ms": ready + 0.01,
			"handler_received_ms": ready + 0.02, "body_enqueued_ms": ready + 0.05, "response_delivery_ms": 0.01,
			"handler_queue_ms": 0.01, "queue_delay_ms": 0.02, "client_delivery_ms": 0.03,
			"blocking_phase": reason, "blocking_phase_ms": block})
	}
	lat := fakeLatency(func(l map[string]any) {
		l["emitted_tokens"], l["gap_samples"], l["retained_gap_samples"], l["max_itl_ms"] = 40, 39, 39, 905.0000000000001
		l["ttft_ms"], l["stall_count"] = 140.0, 3
		reasons := l["stall_reasons"].(map[string]any)
		reasons["training"], reasons["trim"], reasons["gpu_lock_wait"] = 1, 1, 1
		phases := l["phases"].(map[string]any)
		phases["resize_ms"], phases["training_ms"], phases["trim_ms"], phases["gpu_lock_wait_ms"] = 120.5, 905.0000000000001, 260.0, 1462.2
	})
	rec = fakeRecord(id, "stop", lat)
	detail = fakeRecord(id, "stop", lat)
	detail["diagnosis"] = map[string]any{"backend": "cpu", "not_applicable_phases": cpuNotApplicable,
		"own_prefill_ms": 12.5, "tokens_released": false, "tokens": tokens, "stalls_dropped": 0, "stalls": stalls,
		"queued_behind": []any{fakeBlocker("operation", resize, 0.5, 120.5)}}
	return rec, detail
}

func fakeIdleDecode() map[string]any {
	return map[string]any{"sample_count": 0, "tok_per_sec": 0, "p50_itl_ms": 0, "p99_itl_ms": 0, "p999_itl_ms": 0,
		"mean_itl_ms": 0, "max_itl_ms": 0, "stall_threshold_ms": 250, "stall_count": 0, "unexplained_stall_count": 0,
		"stall_reasons": fakeLatency(nil)["stall_reasons"], "window_secs": 60}
}

// checkNoFloatNoise fails when the page prints a number with float noise.
func checkNoFloatNoise(t *testing.T, wd *webDriver) {
	t.Helper()
	text := wd.script(`return document.getElementById("main").innerText`)
	if m := floatNoise.FindAllString(text, -1); len(m) > 0 {
		t.Errorf("the page prints numbers with float noise: %q", m)
	}
}

// TestDashboardOperationBlockers: the stalled gaps name the maintenance
// operation that blocked them, each named operation links to its row in
// the Maintenance panel (a training step to its job's row) and following
// the link highlights that row with the request still open; an operation
// no longer known says so; the resize the request queued behind is shown;
// the sentences name the slice, --memory-reclaim and the KV settings with
// this server's values; the chart's axis title clears the tick labels.
// The screenshots are kept at e2e-artifacts/dashboard-operation-explain.png
// (the stalled gaps and sentences) and dashboard-operation-blockers.png
// (the highlighted row).
func TestDashboardOperationBlockers(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	wd := startWebDriver(t)
	const id = "chatcmpl-maintenance-stalls"
	rec, detail := fakeMaintenanceDiagnosis(id)
	api := &fakeAPI{
		decode:      fakeIdleDecode(),
		recent:      map[string]any{"object": "list", "capacity": 100, "text_capture": false, "data": []any{rec}},
		details:     map[string]any{id: detail},
		maintenance: fakeMaintenance(),
		config:      fakeConfig(),
	}
	base := api.start(t)
	wd.navigate(base + "/ui#request=" + url.QueryEscape(id))
	// The configuration is read in the same refresh as the list, before
	// the detail arrives.
	wd.waitFor(20*time.Second, "the stalled gaps and the Maintenance panel", func() bool {
		_, ok := wd.visibleText(`#diagnosis-stalls tr[data-token="30"]`)
		return ok && len(wd.findAll("#maintenance-rows tr")) == 3
	})

	cell := func(token string) string {
		return wd.textOf(`#diagnosis-stalls tr[data-token="` + token + `"] td:nth-child(4)`)
	}
	training := cell("10")
	for _, want := range []string{fakeStepText + " (905.0 ms)", "device lock wait (910.2 ms), held by the training step above"} {
		if !strings.Contains(training, want) {
			t.Errorf("the training stall's Blocked by lacks %q:\n%s", want, training)
		}
	}
	if strings.Contains(training, "not named") {
		t.Errorf("the training stall's Blocked by still says the operation is not named:\n%s", training)
	}
	links := wd.findAll(`#diagnosis-stalls tr[data-token="10"] a.operation-link`)
	if len(links) != 1 {
		t.Fatalf("the training stall has %d operation links, want 1 (the step, named once):\n%s", len(links), training)
	}
	if got := wd.attr(links[0], "data-panel-id"); got != "5" {
		t.Errorf("the training step links to panel row %q, want its job's row 5", got)
	}
	if got := wd.text(links[0]); got != fakeStepText {
		t.Errorf("the training step's link reads %q, want its summary", got)
	}
	trim := cell("20")
	if want := "device lock wait (262.0 ms), held by " + fakeTrimText; !strings.Contains(trim, want) {
		t.Errorf("the trim stall's Blocked by lacks %q:\n%s", want, trim)
	}
	if l := wd.findAll(`#diagnosis-stalls tr[data-token="20"] a.operation-link`); len(l) != 1 || wd.attr(l[0], "data-panel-id") != "9" {
		t.Errorf("the trim stall does not link to the trim's row 9 (%d links)", len(l))
	}
	gone := cell("30")
	for _, want := range []string{"device lock wait (290.0 ms), held by an operation no longer in the recent list",
		"an operation no longer in the recent list (120.0 ms)"} {
		if !strings.Contains(gone, want) {
			t.Errorf("the stall of an unknown operation lacks %q:\n%s", want, gone)
		}
	}
	if l := wd.findAll(`#diagnosis-stalls tr[data-token="30"] a`); len(l) != 0 {
		t.Errorf("an operation no longer known is a link (%d links)", len(l))
	}

	queued := wd.textOf("#diagnosis-queued-behind")
	if want := fakeResizeTxt + " (120.5 ms)"; !strings.Contains(queued, want) {
		t.Errorf("queued behind = %q, want %q", queued, want)
	}
	if l := wd.findAll("#diagnosis-queued-behind a.operation-link"); len(l) != 1 || wd.attr(l[0], "data-panel-id") != "3" {
		t.Errorf("the resize the request queued behind does not link to its row 3 (%d links)", len(l))
	}

	for sel, wants := range map[string][]string{
		`#diagnosis-explain li[data-reason="training"]`: {"--maintenance-slice (50 ms on this server; default 100 ms)", "epoch", "--serving-profile maintenance"},
		`#diagnosis-explain li[data-reason="trim"]`:     {"--memory-reclaim on-demand", "POST /v1/maintenance/trim"},
		`#diagnosis-body p.note[data-reason="resize"]`:  {"drain", "--kv-budget (8,192 tokens on this server)", "--kv-max-tokens (65,536 tokens on this server)"},
	} {
		got := wd.textOf(sel)
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Errorf("%s = %q, want it to name %q", sel, got, want)
			}
		}
	}
	checkAxisLabelsApart(t, wd)
	wd.script(`document.getElementById("diagnosis-stalls").scrollIntoView(); return ""`)
	wd.screenshot(filepath.Join(repoRoot(t), "e2e-artifacts", "dashboard-operation-explain.png"))

	// The link highlights the job's row, keeps the request open and is
	// linkable.
	wd.click(links[0])
	wd.waitFor(10*time.Second, "the training job's Maintenance row highlighted", func() bool {
		return wd.script(`const r = document.getElementById("maintenance-op-5"); return String(!!r && r.classList.contains("highlight"))`) == "true"
	})
	if got, want := wd.script(`return location.hash`), "#request="+url.QueryEscape(id)+"&operation=5"; got != want {
		t.Errorf("after the operation link, location.hash = %q, want %q", got, want)
	}
	if n := len(wd.findAll("#maintenance-rows tr.highlight")); n != 1 {
		t.Errorf("%d Maintenance rows highlighted, want 1", n)
	}
	if got, ok := wd.visibleText("#diagnosis-id"); !ok || got != id {
		t.Errorf("after the operation link the diagnosis shows %q (visible %v), want %s", got, ok, id)
	}
	wd.screenshot(filepath.Join(repoRoot(t), "e2e-artifacts", "dashboard-operation-blockers.png"))

	// A fresh load of such a link highlights the row once it is listed.
	wd.navigate("about:blank")
	wd.navigate(base + "/ui#request=" + url.QueryEscape(id) + "&operation=9")
	wd.waitFor(20*time.Second, "the trim's Maintenance row highlighted on a fresh load", func() bool {
		return wd.script(`const r = document.getElementById("maintenance-op-9"); return String(!!r && r.classList.contains("highlight"))`) == "true"
	})
	checkNoFloatNoise(t, wd)
}

// checkAxisLabelsApart fails when the gap chart's axis titles overlap a
// tick label.
func checkAxisLabelsApart(t *testing.T, wd *webDriver) {
	t.Helper()
	raw := wd.script(`const box = (e) => { const r = e.getBoundingClientRect(); return {text: e.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom}; };
		const chart = document.getElementById("diagnosis-chart");
		return JSON.stringify({titles: [...chart.querySelectorAll("text.axis.title")].map(box),
			ticks: [...chart.querySelectorAll("text.axis:not(.title)")].map(box)});`)
	type rect struct {
		Text       string
		L, R, T, B float64
	}
	var got struct{ Titles, Ticks []rect }
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("axis labels: %v: %s", err, raw)
	}
	if len(got.Titles) != 2 || len(got.Ticks) < 4 {
		t.Fatalf("axis labels: %d titles and %d ticks: %s", len(got.Titles), len(got.Ticks), raw)
	}
	for _, a := range got.Titles {
		for _, b := range got.Ticks {
			if a.L < b.R && b.L < a.R && a.T < b.B && b.T < a.B {
				t.Errorf("the axis title %q overlaps the tick label %q (%+v, %+v)", a.Text, b.Text, a, b)
			}
		}
	}
}

// TestDashboardMaintenanceJob: a training job is one Maintenance row for
// all its steps (steps done, their total hold, the latest step's summary),
// marked running; every row has its operation's anchor; no number carries
// float noise.
func TestDashboardMaintenanceJob(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	wd := startWebDriver(t)
	api := &fakeAPI{
		decode:      fakeIdleDecode(),
		recent:      map[string]any{"object": "list", "capacity": 100, "text_capture": false, "data": []any{}},
		maintenance: fakeMaintenance(),
	}
	wd.navigate(api.start(t) + "/ui")
	wd.waitFor(20*time.Second, "three Maintenance rows", func() bool { return len(wd.findAll("#maintenance-rows tr")) == 3 })
	var ids []string
	for _, r := range wd.findAll("#maintenance-rows tr") {
		ids = append(ids, wd.attr(r, "id"))
	}
	if got, want := strings.Join(ids, " "), "maintenance-op-9 maintenance-op-5 maintenance-op-3"; got != want {
		t.Errorf("Maintenance row ids %q, want %q", got, want)
	}
	checkNoFloatNoise(t, wd)
	rows := wd.findAll("#maintenance-rows tr")
	checkStartedCell(t, wd, rows[0], "td:nth-child(3)", "2026-12-01T18:33:40.120Z")
	if got := wd.text(wd.findIn(rows[2], "td:last-child")); got != fakeResizeTxt+"; p99 0.103 ms" {
		t.Errorf("the resize's summary = %q, want its decimals rounded", got)
	}
	jobs := wd.findAll(`#maintenance-rows tr[data-kind="training_job"]`)
	if len(jobs) != 1 {
		t.Fatalf("%d training job rows, want 1 for the job's three steps", len(jobs))
	}
	job := jobs[0]
	text := wd.text(job)
	for _, want := range []string{"Training job", "3 steps done so far", "latest: " + fakeStepText, "2,715.3 ms", "running"} {
		if !strings.Contains(text, want) {
			t.Errorf("the training job row %q lacks %q", text, want)
		}
	}
	if wd.attr(job, "data-running") != "true" || len(wd.findAll(`#maintenance-op-5 .live`)) != 1 {
		t.Errorf("the running job's row is not marked running")
	}
	if got := wd.textOf("#maintenance-op-5 td:nth-child(5)"); got != "2,715.3 ms" {
		t.Errorf("the job's Held cell = %q, want its steps' total hold 2,715.3 ms", got)
	}
	if got := wd.textOf("#maintenance-op-3 td:nth-child(5)"); got != "0.096 ms" {
		t.Errorf("the resize's Held cell = %q, want 0.096 ms", got)
	}
}

// checkStartedCell fails unless the time cell sel of the element row
// prints one readable local time, with the ISO instant iso as its tooltip
// only.
func checkStartedCell(t *testing.T, wd *webDriver, row, sel, iso string) {
	t.Helper()
	el := wd.findIn(row, sel)
	got := wd.text(el)
	if got == "" || strings.Contains(got, iso) || strings.Contains(got, "T18:") || strings.HasSuffix(got, "Z") {
		t.Errorf("time cell %s reads %q, want one readable local time (not the ISO instant %s)", sel, got, iso)
	}
	if n := len(regexp.MustCompile(`\d{1,2}:\d{2}:\d{2}`).FindAllString(got, -1)); n != 1 {
		t.Errorf("time cell %s reads %q: %d times of day, want 1", sel, got, n)
	}
	if title := wd.attr(el, "title"); title != iso {
		t.Errorf("time cell %s tooltip = %q, want %q", sel, title, iso)
	}
}

// fakeJob is a training job of GET /v1/train/queue; mod changes it.
func fakeJob(id, state string, mod func(map[string]any)) map[string]any {
	j := map[string]any{"object": "kiln.training_job", "job_id": id, "type": "sft", "state": state, "position": nil,
		"step": 5, "total_steps": 12, "epoch": 1, "epochs": 3, "examples": 4, "losses": []any{7.2712345678, 6.9000000001},
		"adapter": nil, "output_name": "panel", "auto_load": true, "effective_seed": 7, "error": nil,
		"created_at": "2026-12-01T18:33:00.000Z", "started_at": "2026-12-01T18:33:01.000Z", "finished_at": nil}
	if mod != nil {
		mod(j)
	}
	return j
}

// TestDashboardTrainingLive: the Training panel shows a running job's
// slice, its current step's progress and the streams it pauses, then the
// same job swapping its adapter in with the requests the swap waits for;
// a job without those fields shows none of them; a finished job's time is
// one readable local time with the ISO instant as its tooltip. The
// screenshot is kept at e2e-artifacts/dashboard-training-live.png.
func TestDashboardTrainingLive(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	wd := startWebDriver(t)
	const finished = "2026-12-01T18:33:33.499Z"
	done := fakeJob("train-00000000000000aa", "completed", func(j map[string]any) {
		j["step"], j["total_steps"], j["adapter"], j["finished_at"] = 12, 12, "earlier", finished
	})
	queue := func(running map[string]any) map[string]any {
		return map[string]any{"object": "kiln.training_queue", "running": running, "queued": []any{}, "completed": []any{done}}
	}
	api := &fakeAPI{
		decode: fakeIdleDecode(),
		recent: map[string]any{"object": "list", "capacity": 100, "text_capture": false, "data": []any{}},
		trainQueue: queue(fakeJob(fakeJobID, "running", func(j map[string]any) {
			j["slice_ms"], j["step_progress"], j["paused_streams"] = 99.99999999999999, map[string]any{"done": 37, "total": 120}, 2
		})),
	}
	wd.navigate(api.start(t) + "/ui")
	wd.waitFor(20*time.Second, "the running and the finished job", func() bool { return len(wd.findAll("#training-rows tr.job-completed")) == 1 })
	checkStartedCell(t, wd, wd.find("#training-rows tr.job-completed"), "td:nth-child(7)", finished)
	checkNoFloatNoise(t, wd)
	wd.waitFor(20*time.Second, "the running job's slice, progress and paused streams", func() bool {
		_, ok := wd.visibleText("#training-live")
		return ok
	})
	live := wd.textOf("#training-live")
	for _, want := range []string{"slices of at most 100 ms", "current step 31% (37 of 120)", "pausing 2 streams"} {
		if !strings.Contains(live, want) {
			t.Errorf("the running job's line %q lacks %q", live, want)
		}
	}
	if got := wd.textOf(`#training-rows tr[data-job-id="` + fakeJobID + `"] td:nth-child(4)`); got != "6.9000" {
		t.Errorf("the running job's loss = %q, want 6.9000", got)
	}
	wd.screenshot(filepath.Join(repoRoot(t), "e2e-artifacts", "dashboard-training-live.png"))

	api.setTrainQueue(queue(fakeJob(fakeJobID, "swapping", func(j map[string]any) {
		j["step"], j["total_steps"], j["waiting_requests"] = 12, 12, 3
	})))
	wd.waitFor(20*time.Second, "the job swapping its adapter in", func() bool {
		got, ok := wd.visibleText(`#training-rows tr[data-state="swapping"] td:nth-child(2)`)
		return ok && got == "swapping adapter in"
	})
	live = wd.textOf("#training-live")
	for _, want := range []string{"trained; waiting to swap its adapter in", "the swap waits for 3 active requests to finish"} {
		if !strings.Contains(live, want) {
			t.Errorf("the swapping job's line %q lacks %q", live, want)
		}
	}
	if got := wd.textOf("#training-curve-title"); !strings.Contains(got, "swapping adapter in") {
		t.Errorf("curve title %q, want the swapping state", got)
	}

	// A server that sends none of the new fields: the job's row alone.
	api.setTrainQueue(queue(fakeJob(fakeJobID, "running", nil)))
	wd.waitFor(20*time.Second, "the running job without its live line", func() bool {
		got, ok := wd.visibleText(`#training-rows tr[data-job-id="` + fakeJobID + `"] td:nth-child(2)`)
		_, live := wd.tryFind("#training-live")
		return ok && got == "running" && !live
	})
}
