package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PrefixCacheReading is what a server said about its prefix cache at one
// instant: the KV bytes its cached blocks hold (shared with active
// requests or not), the part no active request uses, and its bound. A
// field is null when the server did not say (a server without the cache,
// or a peer).
type PrefixCacheReading struct {
	Bytes      *int64 `json:"bytes"`
	IdleBytes  *int64 `json:"idle_bytes"`
	LimitBytes *int64 `json:"limit_bytes"`
	Enabled    *bool  `json:"enabled"`
	// Source names where the figures came from: "/health" (the engine
	// snapshot's prefix cache object), "/metrics" (the kiln_prefix_cache_*
	// gauges), both, or "" when neither had them.
	Source string `json:"source,omitempty"`
}

// Known reports whether the reading has any figure.
func (r PrefixCacheReading) Known() bool {
	return r.Bytes != nil || r.IdleBytes != nil || r.LimitBytes != nil || r.Enabled != nil
}

// PrefixCacheFromJSON reads the prefix cache object of a JSON document
// such as /health's engine snapshot: the first object, at any depth, under
// a key that reads "prefix_cache" once case and underscores are ignored
// (prefix_cache, PrefixCache), and in it the numbers under bytes,
// idle_bytes and limit_bytes (same rule) and the boolean enabled.
func PrefixCacheFromJSON(doc []byte) (PrefixCacheReading, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return PrefixCacheReading{}, false
	}
	obj, ok := findKey(v, "prefixcache")
	if !ok {
		return PrefixCacheReading{}, false
	}
	var r PrefixCacheReading
	for k, x := range obj {
		switch normKey(k) {
		case "bytes":
			r.Bytes = jsonInt(x)
		case "idlebytes":
			r.IdleBytes = jsonInt(x)
		case "limitbytes":
			r.LimitBytes = jsonInt(x)
		case "enabled":
			if b, ok := x.(bool); ok {
				r.Enabled = &b
			}
		}
	}
	if !r.Known() {
		return r, false
	}
	r.Source = "/health"
	return r, true
}

func normKey(k string) string { return strings.ToLower(strings.ReplaceAll(k, "_", "")) }

// findKey returns the object under key (normalised) in v: an object's
// own members first, then depth first in sorted key order.
func findKey(v any, key string) (map[string]any, bool) {
	switch t := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(t))
		for _, k := range keys {
			if o, ok := t[k].(map[string]any); ok && normKey(k) == key {
				return o, true
			}
		}
		for _, k := range keys {
			if o, ok := findKey(t[k], key); ok {
				return o, true
			}
		}
	case []any:
		for _, x := range t {
			if o, ok := findKey(x, key); ok {
				return o, true
			}
		}
	}
	return nil, false
}

func jsonInt(x any) *int64 {
	n, ok := x.(json.Number)
	if !ok {
		return nil
	}
	if i, err := n.Int64(); err == nil {
		return &i
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	i := int64(f)
	return &i
}

// PrefixCacheFromMetrics reads the prefix cache gauges of a Prometheus
// text exposition: kiln_prefix_cache_bytes (summed over its series, so a
// split by state still gives the whole; a series with a label value
// "idle" also counts as idle), kiln_prefix_cache_idle_bytes and
// kiln_prefix_cache_limit_bytes, under any kiln_ prefix before
// prefix_cache (kiln_batching_engine_prefix_cache_bytes reads the same).
func PrefixCacheFromMetrics(text string) (PrefixCacheReading, bool) {
	var r PrefixCacheReading
	add := func(p **int64, v int64) {
		if *p == nil {
			*p = new(int64)
		}
		**p += v
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || !strings.HasPrefix(line, "kiln_") {
			continue
		}
		name, labels, value, ok := parseSample(line)
		if !ok {
			continue
		}
		i := strings.Index(name, "prefix_cache_")
		if i < 0 || (i > len("kiln_") && name[i-1] != '_') {
			continue
		}
		v := int64(value)
		switch name[i+len("prefix_cache_"):] {
		case "bytes":
			add(&r.Bytes, v)
			if strings.Contains(labels, `"idle"`) {
				add(&r.IdleBytes, v)
			}
		case "idle_bytes":
			add(&r.IdleBytes, v)
		case "limit_bytes":
			add(&r.LimitBytes, v)
		}
	}
	if !r.Known() {
		return r, false
	}
	r.Source = "/metrics"
	return r, true
}

// parseSample splits one exposition line: name{labels} value [timestamp].
func parseSample(line string) (name, labels string, value float64, ok bool) {
	var rest string
	if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return "", "", 0, false
		}
		name, labels, rest = line[:i], line[i+1:j], line[j+1:]
	} else if i >= 0 {
		name, rest = line[:i], line[i:]
	} else {
		return "", "", 0, false
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", "", 0, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return "", "", 0, false
	}
	return name, labels, v, true
}

// merge fills r's unknown fields from o's.
func (r PrefixCacheReading) merge(o PrefixCacheReading) PrefixCacheReading {
	used := false
	fill := func(dst **int64, src *int64) {
		if *dst == nil && src != nil {
			*dst, used = src, true
		}
	}
	fill(&r.Bytes, o.Bytes)
	fill(&r.IdleBytes, o.IdleBytes)
	fill(&r.LimitBytes, o.LimitBytes)
	if r.Enabled == nil && o.Enabled != nil {
		r.Enabled, used = o.Enabled, true
	}
	switch {
	case used && r.Source != "":
		r.Source += " and " + o.Source
	case used:
		r.Source = o.Source
	}
	return r
}

// PrefixCacheWatch is the prefix cache's memory over one arm's run: read
// once before it, at every tick while it ran, and once after it.
type PrefixCacheWatch struct {
	EveryMs   float64            `json:"every_ms"`
	Polls     int                `json:"polls"`
	PeakBytes *int64             `json:"peak_bytes"` // the most Bytes of any reading; null when none said
	PeakIdle  *int64             `json:"peak_idle_bytes"`
	Before    PrefixCacheReading `json:"before"`
	After     PrefixCacheReading `json:"after"`
	Errors    []string           `json:"errors,omitempty"` // the first few failed reads
}

// observe adds one reading.
func (w *PrefixCacheWatch) observe(r PrefixCacheReading) {
	w.Polls++
	peak := func(p **int64, v *int64) {
		if v != nil && (*p == nil || *v > **p) {
			x := *v
			*p = &x
		}
	}
	peak(&w.PeakBytes, r.Bytes)
	peak(&w.PeakIdle, r.IdleBytes)
}

const maxWatchErrors = 4

// Watcher polls a server's prefix cache figures while a run goes on.
// WatchPrefixCache starts its goroutine; Stop ends it and waits for it.
type Watcher struct {
	c      *Client
	every  time.Duration
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	res    PrefixCacheWatch
}

// WatchPrefixCache reads the server's prefix cache once now, then every
// interval (none when every is 0) until Stop, which reads it once more.
//
// The polls go over connections of their own, so that a connection a
// server closes after a poll (llama-server closes one after a few
// requests) is never the one a measured request picks up.
func WatchPrefixCache(ctx context.Context, c *Client, every time.Duration) *Watcher {
	ctx, cancel := context.WithCancel(ctx)
	own := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	if c.HTTP != nil {
		own.Timeout = c.HTTP.Timeout
		if t, ok := c.HTTP.Transport.(*http.Transport); ok {
			own.Transport = t.Clone()
		}
	}
	w := &Watcher{c: &Client{BaseURL: c.BaseURL, Token: c.Token, HTTP: own}, every: every, cancel: cancel, done: make(chan struct{})}
	w.res.EveryMs = float64(every) / float64(time.Millisecond)
	w.res.Before = w.poll(ctx)
	go func() {
		defer close(w.done)
		if every <= 0 {
			return
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.poll(ctx)
			}
		}
	}()
	return w
}

// Stop ends the polling, reads the figures after the run with ctx and
// returns the watch. It is safe to call once.
func (w *Watcher) Stop(ctx context.Context) PrefixCacheWatch {
	w.cancel()
	<-w.done
	after := w.poll(ctx)
	w.c.HTTP.CloseIdleConnections()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.res.After = after
	return w.res
}

// poll reads /health and /metrics once and records the reading.
func (w *Watcher) poll(ctx context.Context) PrefixCacheReading {
	var r PrefixCacheReading
	var errs []string
	// /health answers 503 with the same body while unready: still a
	// reading.
	if b, err := w.c.get(ctx, "/health", http.StatusServiceUnavailable); err != nil {
		errs = append(errs, err.Error())
	} else if jr, ok := PrefixCacheFromJSON(b); ok {
		r = jr
	}
	if b, err := w.c.get(ctx, "/metrics"); err != nil {
		errs = append(errs, err.Error())
	} else if mr, ok := PrefixCacheFromMetrics(string(b)); ok {
		r = r.merge(mr)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.res.observe(r)
	for _, e := range errs {
		if len(w.res.Errors) < maxWatchErrors {
			w.res.Errors = append(w.res.Errors, e)
		}
	}
	return r
}
