package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func i64(n int64) *int64 { return &n }

func TestPrefixCacheFromJSON(t *testing.T) {
	on := true
	for _, tc := range []struct {
		name string
		doc  string
		want PrefixCacheReading
		ok   bool
	}{
		{"snake case under engine",
			`{"status":"ok","engine":{"active":3,"prefix_cache":{"enabled":true,"bytes":1048576,"idle_bytes":524288,"limit_bytes":8388608,"blocks":64}}}`,
			PrefixCacheReading{Bytes: i64(1 << 20), IdleBytes: i64(1 << 19), LimitBytes: i64(8 << 20), Enabled: &on, Source: "/health"}, true},
		{"Go field names",
			`{"engine":{"PrefixCache":{"Enabled":true,"Bytes":2048,"IdleBytes":0,"LimitBytes":4096}}}`,
			PrefixCacheReading{Bytes: i64(2048), IdleBytes: i64(0), LimitBytes: i64(4096), Enabled: &on, Source: "/health"}, true},
		{"a float byte count", `{"prefix_cache":{"bytes":1.5e3}}`,
			PrefixCacheReading{Bytes: i64(1500), Source: "/health"}, true},
		{"no cache object: a build before the cache", `{"status":"ok","engine":{"active":0,"kv_reserved":0}}`, PrefixCacheReading{}, false},
		{"llama-server's health", `{"status":"ok"}`, PrefixCacheReading{}, false},
		{"a config flag is no reading", `{"prefix_cache":"on"}`, PrefixCacheReading{}, false},
		{"not JSON", `<html>`, PrefixCacheReading{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := PrefixCacheFromJSON([]byte(tc.doc))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reading (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrefixCacheFromMetrics(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want PrefixCacheReading
		ok   bool
	}{
		{"one gauge each", `# HELP kiln_prefix_cache_bytes KV bytes held by the prefix cache.
# TYPE kiln_prefix_cache_bytes gauge
kiln_prefix_cache_bytes 3.145728e+06
kiln_prefix_cache_idle_bytes 1048576
kiln_prefix_cache_limit_bytes 6.7108864e+07
kiln_prefix_cache_evictions_total{reason="capacity"} 4
`, PrefixCacheReading{Bytes: i64(3 << 20), IdleBytes: i64(1 << 20), LimitBytes: i64(64 << 20), Source: "/metrics"}, true},
		{"split by state", `kiln_prefix_cache_bytes{state="active"} 2048
kiln_prefix_cache_bytes{state="idle"} 1024
`, PrefixCacheReading{Bytes: i64(3072), IdleBytes: i64(1024), Source: "/metrics"}, true},
		{"under the engine's prefix", "kiln_batching_engine_prefix_cache_bytes 4096\nkiln_batching_engine_prefix_cache_idle_bytes 1024\n",
			PrefixCacheReading{Bytes: i64(4096), IdleBytes: i64(1024), Source: "/metrics"}, true},
		{"other families are not read", "kiln_prefix_cache_evicted_bytes_total 9\nkiln_xprefix_cache_bytes 5\ngo_prefix_cache_bytes 3\n",
			PrefixCacheReading{}, false},
		{"with a timestamp", "kiln_prefix_cache_bytes 100 1700000000000\n",
			PrefixCacheReading{Bytes: i64(100), Source: "/metrics"}, true},
		{"none", "kiln_requests_total 4\nkiln_kv_utilization 0.5\n", PrefixCacheReading{}, false},
		{"garbage values are skipped", "kiln_prefix_cache_bytes NaN\nkiln_prefix_cache_bytes{x=\"1\" 5\n", PrefixCacheReading{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := PrefixCacheFromMetrics(tc.text)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reading (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrefixCacheMerge(t *testing.T) {
	js := PrefixCacheReading{Bytes: i64(10), Source: "/health"}
	m := PrefixCacheReading{Bytes: i64(99), IdleBytes: i64(4), Source: "/metrics"}
	want := PrefixCacheReading{Bytes: i64(10), IdleBytes: i64(4), Source: "/health and /metrics"}
	if diff := cmp.Diff(want, js.merge(m)); diff != "" {
		t.Errorf("merge (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(m, (PrefixCacheReading{}).merge(m)); diff != "" {
		t.Errorf("merge into nothing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(js, js.merge(PrefixCacheReading{Bytes: i64(1), Source: "/metrics"})); diff != "" {
		t.Errorf("a merge that adds nothing changed the reading (-want +got):\n%s", diff)
	}
}

// TestWatchPrefixCache polls a server whose cache grows then shrinks: the
// watch keeps the reading before, the peak and the reading after. With no
// interval it reads only before and after, so the test needs no clock.
func TestWatchPrefixCache(t *testing.T) {
	var calls atomic.Int64
	held := []int64{0, 5 << 20, 2 << 20} // before, during (read by the test's extra poll), after
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			n := calls.Add(1) - 1
			fmt.Fprintf(w, `{"engine":{"prefix_cache":{"bytes":%d,"idle_bytes":%d}}}`, held[n], held[n]/2)
		case "/metrics":
			http.Error(w, "no", http.StatusNotImplemented)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
	ctx := context.Background()
	w := WatchPrefixCache(ctx, c, 0)
	w.poll(ctx) // what a tick during the run would read
	got := w.Stop(ctx)
	if got.Polls != 3 || *got.PeakBytes != 5<<20 || *got.PeakIdle != 5<<19 {
		t.Errorf("polls %d peak %v idle peak %v, want 3, 5 MiB, 2.5 MiB", got.Polls, *got.PeakBytes, *got.PeakIdle)
	}
	if *got.Before.Bytes != 0 || *got.After.Bytes != 2<<20 || got.After.Source != "/health" {
		t.Errorf("before %+v after %+v", got.Before, got.After)
	}
	if len(got.Errors) == 0 || len(got.Errors) > maxWatchErrors {
		t.Errorf("errors %q, want the failed /metrics reads, at most %d", got.Errors, maxWatchErrors)
	}
}

// TestWatchPrefixCacheAbsent: a server without the cache (or a peer) gives
// a watch with null figures, not zeros.
func TestWatchPrefixCacheAbsent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"status":"ok"}`)
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, HTTP: srv.Client()}
	got := WatchPrefixCache(context.Background(), c, 0).Stop(context.Background())
	if got.PeakBytes != nil || got.After.Known() || got.Polls != 2 {
		t.Errorf("watch %+v, want two polls and no figures", got)
	}
}

func TestArmServeArgs(t *testing.T) {
	base := []string{"serve", "--model", "m"}
	on, _ := ParseArm("on:prefix-cache=on")
	if diff := cmp.Diff([]string{"serve", "--model", "m", "--prefix-cache=on"}, on.ServeArgs(base)); diff != "" {
		t.Errorf("flag arm (-want +got):\n%s", diff)
	}
	plain, err := ParseArm("baseline:")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(base, plain.ServeArgs(base)); diff != "" {
		t.Errorf("baseline arm (-want +got):\n%s", diff)
	}
	if len(base) != 3 {
		t.Error("ServeArgs changed its base")
	}
}
