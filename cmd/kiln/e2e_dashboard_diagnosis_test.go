package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// stallMark is what the page draws for one stalled gap of the diagnosis
// chart: its data, its computed fill beside its reason's legend swatch,
// its box on the page, whether it is the topmost element at its centre,
// and the tooltip's first line while the pointer is over it.
type stallMark struct {
	Index, Reason, Fill, Legend string
	Left, Right                 float64
	OnTop                       bool
	Tip                         string
}

// stallMarks reads the chart's stall marks in document order. Every box
// and topmost element is read before any hover, so the tooltip covers
// none of them.
func stallMarks(t *testing.T, wd *webDriver) []stallMark {
	t.Helper()
	raw := wd.script(`const chart = document.getElementById("diagnosis-chart");
		chart.scrollIntoView({block: "center"});
		const marks = [...chart.querySelectorAll("circle.stall")];
		const out = marks.map((c) => {
			const r = c.getBoundingClientRect();
			const sw = document.querySelector('#diagnosis-legend li[data-reason="' + c.dataset.reason + '"] .swatch');
			return {index: c.dataset.index, reason: c.dataset.reason, fill: getComputedStyle(c).fill,
				legend: sw ? getComputedStyle(sw).backgroundColor : "", left: r.left, right: r.right,
				onTop: document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === c};
		});
		marks.forEach((c, i) => {
			const r = c.getBoundingClientRect();
			c.dispatchEvent(new MouseEvent("mousemove", {clientX: r.x + r.width / 2, clientY: r.y + r.height / 2, bubbles: true}));
			out[i].tip = document.getElementById("diagnosis-tooltip").innerText.split("\n")[0];
		});
		return JSON.stringify(out);`)
	var marks []stallMark
	if err := json.Unmarshal([]byte(raw), &marks); err != nil {
		t.Fatalf("stall marks: %v: %s", err, raw)
	}
	return marks
}

// cpuNotApplicable are the phases the CPU backend can never produce (the
// GPU-only ones); every other phase may be measured.
var cpuNotApplicable = []string{"readback_ms", "graph_capture_ms", "graph_replay_ms", "synchronization_ms"}

// checkPhaseLists checks the diagnosis's phase lists against each other:
// the collapsed not-applicable list is exactly cpuNotApplicable; a phase
// the page shows measured is never also listed as not applicable or not
// observed; each maintenance phase is either measured or "not observed in
// this request", never not applicable. It returns the measured phases.
func checkPhaseLists(t *testing.T, wd *webDriver) map[string]bool {
	t.Helper()
	raw := wd.script(`const keys = (sel) => [...document.querySelectorAll(sel)].map((e) => e.dataset.phase.replace(/:.*/, ""));
		const na = document.getElementById("diagnosis-not-applicable");
		return JSON.stringify({measured: keys("#diagnosis-phases tr[data-phase]"), notObserved: keys("#diagnosis-not-measured li"),
			notApplicable: keys("#diagnosis-not-applicable li"), summary: na ? na.querySelector("summary").textContent : "",
			open: na ? na.open : false, title: document.getElementById("not-measured-title").textContent});`)
	var got struct {
		Measured, NotObserved, NotApplicable []string
		Summary, Title                       string
		Open                                 bool
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("phase lists: %v: %s", err, raw)
	}
	if diff := cmp.Diff(cpuNotApplicable, got.NotApplicable); diff != "" {
		t.Errorf("not-applicable phases (-want +got):\n%s", diff)
	}
	if want := fmt.Sprintf("%d phases not applicable on the CPU backend", len(cpuNotApplicable)); got.Summary != want || got.Open {
		t.Errorf("not-applicable summary %q (expanded: %v), want %q, collapsed", got.Summary, got.Open, want)
	}
	if got.Title != "Not observed in this request" {
		t.Errorf("the null phases' heading is %q", got.Title)
	}
	measured, notObserved := setOf(got.Measured), setOf(got.NotObserved)
	for _, k := range got.NotApplicable {
		if measured[k] || notObserved[k] {
			t.Errorf("%s is listed as not applicable and also as measured (%v) or not observed (%v)", k, measured[k], notObserved[k])
		}
	}
	for _, k := range []string{"resize_ms", "trim_ms", "adapter_ms", "training_ms"} {
		if measured[k] == notObserved[k] {
			t.Errorf("maintenance phase %s: measured %v, not observed %v; want exactly one", k, measured[k], notObserved[k])
		}
	}
	return measured
}

func setOf(s []string) map[string]bool {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}

// TestDashboardDiagnosisMarks serves a request with stalls on three
// adjacent tokens (two of one reason, one of another) and measured
// maintenance phases, from a server that (as one did) also lists those
// measured phases as not applicable. Each stall is its own mark, on top,
// apart from its neighbours, filled with its legend's colour, with its own
// hover; the axis titles clear the tick labels ("100 ms" among them); the
// measured phases are listed as measured only. The screenshot
// is kept at e2e-artifacts/dashboard-diagnosis-marks.png.
func TestDashboardDiagnosisMarks(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	wd := startWebDriver(t)
	const id = "chatcmpl-adjacent-stalls"
	rec, detail := fakeDiagnosis(id)
	api := &fakeAPI{
		decode: map[string]any{"sample_count": 0, "tok_per_sec": 0, "p50_itl_ms": 0, "p99_itl_ms": 0, "p999_itl_ms": 0,
			"mean_itl_ms": 0, "max_itl_ms": 0, "stall_threshold_ms": 250, "stall_count": 0, "unexplained_stall_count": 0,
			"stall_reasons": fakeLatency(nil)["stall_reasons"], "window_secs": 60},
		recent:  map[string]any{"object": "list", "capacity": 100, "text_capture": false, "data": []any{rec}},
		details: map[string]any{id: detail},
	}
	wd.navigate(api.start(t) + "/ui#request=" + url.QueryEscape(id))
	wd.waitFor(20*time.Second, "the gap chart with three stall marks", func() bool {
		return len(wd.findAll("#diagnosis-chart circle.stall")) == 3
	})
	if got := wd.script(`return document.getElementById("diagnosis-chart").lastElementChild.getAttribute("class")`); got != "stall-marks" {
		t.Errorf("the chart's last element is %q, want the stall marks drawn over everything", got)
	}
	marks := stallMarks(t, wd)
	wd.script(`document.getElementById("diagnosis-chart").dispatchEvent(new MouseEvent("mouseleave")); return ""`)
	wd.screenshot(filepath.Join(repoRoot(t), "e2e-artifacts", "dashboard-diagnosis-marks.png"))
	want := []struct{ index, reason, fill string }{
		{"60", "actor_prefill", "rgb(232, 89, 12)"}, {"61", "actor_prefill", "rgb(232, 89, 12)"}, {"62", "gpu_lock_wait", "rgb(194, 37, 92)"},
	}
	if len(marks) != len(want) {
		t.Fatalf("%d stall marks, want %d: %+v", len(marks), len(want), marks)
	}
	for i, m := range marks {
		w := want[i]
		if m.Index != w.index || m.Reason != w.reason || m.Fill != w.fill || m.Legend != w.fill {
			t.Errorf("mark %d: token %s %s filled %q, legend %q; want token %s %s in %s as its legend",
				i, m.Index, m.Reason, m.Fill, m.Legend, w.index, w.reason, w.fill)
		}
		if !m.OnTop {
			t.Errorf("the mark of token %s is covered at its centre", m.Index)
		}
		if !strings.HasPrefix(m.Tip, "Token "+w.index+" — gap") {
			t.Errorf("hovering the mark of token %s shows %q", w.index, m.Tip)
		}
		if i > 0 && m.Left < marks[i-1].Right {
			t.Errorf("the marks of adjacent tokens %s and %s overlap (%v > %v)", marks[i-1].Index, m.Index, marks[i-1].Right, m.Left)
		}
	}
	checkAxisLabelsApart(t, wd)
	measured := checkPhaseLists(t, wd)
	for _, k := range []string{"resize_ms", "adapter_ms", "training_ms"} {
		if !measured[k] {
			t.Errorf("the measured %s is not in the phase table", k)
		}
	}
}

// fakeDiagnosis is the record and detail of a 120-token request whose
// tokens 60 and 61 stalled on a prefill and 62 on the device lock, with
// resize, adapter and training measured and trim not observed. Its
// not_applicable_phases wrongly lists the three measured phases too.
func fakeDiagnosis(id string) (rec, detail map[string]any) {
	stalled := map[int]struct {
		gap    float64
		reason string
	}{60: {300, "actor_prefill"}, 61: {320, "actor_prefill"}, 62: {310, "gpu_lock_wait"}}
	var tokens, stalls []any
	ready := 13.0
	for i := range 120 {
		reason, gap := any("actor_decode"), 4.0
		if s, ok := stalled[i]; ok {
			reason, gap = s.reason, s.gap
			stalls = append(stalls, map[string]any{"token_index": i, "gap_ms": gap, "reason": reason, "candidate_ms": gap - 10, "blockers": []any{}})
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
		l["emitted_tokens"], l["gap_samples"], l["retained_gap_samples"], l["max_itl_ms"] = 120, 119, 119, 320.0
		l["stall_count"] = 3
		reasons := l["stall_reasons"].(map[string]any)
		reasons["actor_prefill"], reasons["gpu_lock_wait"] = 2, 1
		phases := l["phases"].(map[string]any)
		phases["resize_ms"], phases["adapter_ms"], phases["training_ms"], phases["gpu_lock_wait_ms"] = 1642.7, 0.032, 22530.0, 310.0
	})
	rec = fakeRecord(id, "stop", lat)
	detail = fakeRecord(id, "stop", lat)
	detail["diagnosis"] = map[string]any{"backend": "cpu",
		"not_applicable_phases": append(append([]string{}, cpuNotApplicable...), "resize_ms", "adapter_ms", "training_ms"),
		"own_prefill_ms":        12.5, "tokens_released": false, "tokens": tokens, "stalls_dropped": 0, "stalls": stalls}
	return rec, detail
}
