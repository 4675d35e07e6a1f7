package main

import (
	"testing"

	"github.com/kiln-ai/kiln/internal/promseries"
)

// TestCollectorSameNumbers: kiln serve exports 100% of its spans to
// otelcol-kiln; after a workload picked from a seed, with a deliberate
// prefill stall, every kiln_* request series the kilnlatency connector
// exposes (through the contrib Prometheus exporter) equals the server's
// own /metrics: bucket counts, counters by reason and status, phases.
func TestCollectorSameNumbers(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	col := startOtelcolKiln(t)
	srv := startServeEnv(t, exportEnv(col.OTLP, "kiln-e2e-collector"), "--prefill-chunk", "2048")
	srv.seededWorkload(t, e2eSeed(t))

	want := func() promseries.Series { return seriesOf(t, srv.URL+"/metrics") }
	if w := want(); w[`kiln_token_stalls_total{reason="actor_prefill"}`] == 0 {
		t.Fatalf("the workload made no actor_prefill stall; server series: %v", w)
	}
	waitSameSeries(t, col, want)
}

// TestCollectorReplicas: two kiln serve replicas export to one
// otelcol-kiln gateway; each of the connector's series equals the sum of
// the two replicas' own.
func TestCollectorReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	col := startOtelcolKiln(t)
	a := startServeEnv(t, exportEnv(col.OTLP, "kiln-e2e-replica"), "--prefill-chunk", "2048")
	b := startServeEnv(t, exportEnv(col.OTLP, "kiln-e2e-replica"), "--prefill-chunk", "2048")
	seed := e2eSeed(t)
	a.seededWorkload(t, seed)
	b.seededWorkload(t, seed+1)

	waitSameSeries(t, col, func() promseries.Series {
		return promseries.Add(seriesOf(t, a.URL+"/metrics"), seriesOf(t, b.URL+"/metrics"))
	})
}
