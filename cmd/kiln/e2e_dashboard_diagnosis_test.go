package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
