package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The dashboard tests drive Debian's headless Chromium through
// chromedriver's W3C WebDriver HTTP API (a small client below, net/http
// and encoding/json only) against the real kiln binary.

// TestDashboard opens /ui on an idle server, makes a deliberate
// actor_prefill stall, waits for the page to refresh by itself and list
// the stalled request, opens its Latency diagnosis and checks what it
// shows. The screenshot is kept at e2e-artifacts/dashboard.png.
func TestDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	wd := startWebDriver(t)
	// One large prefill chunk: the long prompt is prefilled in a single
	// cycle, stalling the decoding request's next gap.
	srv := startServe(t, "--prefill-chunk", "2048", "--memory-reclaim", "on-demand")

	wd.navigate(srv.URL + "/ui")
	defer wd.screenshot(filepath.Join(repoRoot(t), "e2e-artifacts", "dashboard.png"))

	// Before any request: the explicit idle state and an empty list.
	wd.waitVisible("#decode-idle")
	if got, want := wd.textOf("#decode-idle"), "No decode gaps in the last 60 s."; got != want {
		t.Errorf("decode idle state = %q, want %q", got, want)
	}
	wd.waitVisible("#recent-empty")
	if got := wd.textOf("#recent-empty"); got != "No completed requests yet." {
		t.Errorf("empty recent-requests list says %q", got)
	}
	wd.waitVisible("#maintenance-empty")
	if got := wd.textOf("#maintenance-empty"); !strings.HasPrefix(got, "No maintenance operations yet") {
		t.Errorf("empty maintenance panel says %q", got)
	}

	srv.stallWorkload(t, stallPromptWords)

	// The page refreshes by itself: no reload, no navigation.
	var row string
	wd.waitFor(45*time.Second, "the recent-requests list to show a request marked stalled", func() bool {
		rows := wd.findAll(`#recent-rows tr[data-stalled="true"]`)
		if len(rows) == 0 {
			return false
		}
		row = rows[0]
		return true
	})
	if n := len(wd.findAll("#recent-rows tr")); n != 2 {
		t.Errorf("recent requests lists %d rows, want 2 (the streamed and the long-prompt request)", n)
	}
	id := wd.attr(row, "data-request-id")
	var longID string
	for _, r := range wd.findAll(`#recent-rows tr[data-stalled="false"]`) {
		longID = wd.attr(r, "data-request-id")
	}
	if badge := wd.text(wd.findIn(row, ".badge.stall")); !strings.Contains(badge, "actor_prefill") {
		t.Errorf("stall badge = %q, want the dominant reason actor_prefill", badge)
	}
	if unmarked := wd.findAll(`#recent-rows tr[data-stalled="false"]`); len(unmarked) != 1 {
		t.Errorf("%d rows are marked not stalled, want 1 (the long-prompt request)", len(unmarked))
	}

	// The decode panel left its idle state and counts the stall.
	wd.waitVisible("#decode-body")
	if got := wd.textOf("#decode-cadence"); !strings.HasSuffix(got, "tok/s") {
		t.Errorf("decode cadence = %q, want a tok/s value", got)
	}
	if got := wd.textOf("#decode-reasons"); !strings.Contains(got, "actor_prefill") {
		t.Errorf("decode stall reasons = %q, want actor_prefill", got)
	}

	// Open the request: a click on the row (not on its link) routes to
	// #request=<id>.
	wd.click(wd.findIn(row, "td:nth-child(3)"))
	wd.waitFor(10*time.Second, "the Latency diagnosis of "+id, func() bool {
		got, ok := wd.visibleText("#diagnosis-id")
		return ok && got == id
	})
	// The per-token detail arrives after the summary and re-renders the
	// panel once: wait for it before reading elements.
	wd.waitFor(20*time.Second, "the per-token detail of "+id, func() bool {
		_, ok := wd.visibleText("#diagnosis-legend")
		return ok
	})
	if got := wd.textOf("#diagnosis-adapter"); got != "base" {
		t.Errorf("diagnosis adapter = %q, want base (adapter_used)", got)
	}
	if got := wd.textOf("#diagnosis-prefix-cache"); !strings.HasPrefix(got, "Prefix cache: ") || !strings.Contains(got, " prompt tokens") {
		t.Errorf("diagnosis prefix cache = %q, want what the prompt reused, in words", got)
	}
	if got, want := wd.script(`return location.hash`), "#request="+url.QueryEscape(id); got != want {
		t.Errorf("location.hash = %q, want %q (linkable)", got, want)
	}
	if got := wd.textOf("#diagnosis-reasons"); !strings.Contains(got, "actor_prefill") {
		t.Errorf("diagnosis stall reasons = %q, want actor_prefill", got)
	}
	summary := wd.textOf("#diagnosis-summary")
	for _, want := range []string{"TTFT", "ITL p50", "ITL p99", "ITL p99.9", "ITL max", "Stall threshold", "Unexplained stalls"} {
		if !strings.Contains(summary, want) {
			t.Errorf("diagnosis summary lacks %q:\n%s", want, summary)
		}
	}
	if !regexp.MustCompile(`(^|\n)Stalls\n[1-9]`).MatchString(summary) {
		t.Errorf("diagnosis summary does not count the stall:\n%s", summary)
	}
	checkDiagnosisDetail(t, wd, id, longID)
	if got := wd.textOf(`#diagnosis-phases tr[data-phase="client_delivery_ms"] th`); !strings.HasPrefix(got, "Body enqueue ") {
		t.Errorf("client_delivery_ms is labelled %q, want \"Body enqueue\"", got)
	}
	if got := wd.textOf(`#diagnosis-phases tr[data-phase="prefill_ms"] th`); !strings.HasPrefix(got, "Prefill") {
		t.Errorf("prefill_ms is labelled %q, want \"Prefill\"", got)
	}
	coverage := regexp.MustCompile(`^\d+ of \d+ gaps? retained$`)
	if got := wd.textOf("#diagnosis-coverage"); !coverage.MatchString(got) {
		t.Errorf("coverage line = %q, want it to match %v", got, coverage)
	}
	if wd.attr(wd.find(`#recent-rows tr[aria-current="true"]`), "data-request-id") != id {
		t.Errorf("the opened request's row is not marked current")
	}

	// The blocking request's link opens its own diagnosis.
	wd.click(wd.find("#diagnosis-stalls a.blocker-link"))
	wd.waitFor(10*time.Second, "the Latency diagnosis of the blocking request "+longID, func() bool {
		got, ok := wd.visibleText("#diagnosis-id")
		return ok && got == longID
	})
	if got, want := wd.script(`return location.hash`), "#request="+url.QueryEscape(longID); got != want {
		t.Errorf("after the blocker link, location.hash = %q, want %q", got, want)
	}

	// The link works on a fresh load, also from /ui/ (trailing slash).
	wd.navigate("about:blank")
	wd.navigate(srv.URL + "/ui/#request=" + url.QueryEscape(id))
	wd.waitFor(20*time.Second, "the Latency diagnosis on a fresh load of /ui/", func() bool {
		got, ok := wd.visibleText("#diagnosis-id")
		return ok && got == id
	})

	checkMaintenancePanel(t, wd, srv.URL)
}

// checkMaintenancePanel runs an operator trim and waits for the
// maintenance panel to list it by itself (no reload): kind, reason, a
// duration and an outcome.
func checkMaintenancePanel(t *testing.T, wd *webDriver, base string) {
	t.Helper()
	resp, err := http.Post(base+"/v1/maintenance/trim", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("trim: HTTP %d", resp.StatusCode)
	}
	var row string
	wd.waitFor(20*time.Second, "the maintenance panel to list the trim", func() bool {
		rows := wd.findAll(`#maintenance-rows tr[data-kind="trim"]`)
		if len(rows) == 0 {
			return false
		}
		row = rows[0]
		return true
	})
	text := wd.text(row)
	for _, want := range []string{"Trim", "maintenance", " ms", "reclaimed"} {
		if !strings.Contains(text, want) {
			t.Errorf("maintenance row %q lacks %q", text, want)
		}
	}
	if _, shown := wd.tryFindVisible("#maintenance-empty"); shown {
		t.Error("the maintenance panel still says it is empty")
	}
}

// checkDiagnosisDetail checks the detailed Latency diagnosis of the
// request id, stalled by the prefill of blockerID: the gap chart with its
// stalled gaps coloured and the threshold drawn, the hover with the token's
// 14 timing fields, the stalled gaps naming the blocking request, the
// sentence for actor_prefill, the phases split into own and shared work
// and the GPU-only phases the CPU backend never produces, collapsed. The
// screenshot with the hover is kept at e2e-artifacts/dashboard-diagnosis.png.
func checkDiagnosisDetail(t *testing.T, wd *webDriver, id, blockerID string) {
	t.Helper()
	var stalls []string
	wd.waitFor(20*time.Second, "the gap chart of "+id+" with its stalled gaps", func() bool {
		stalls = wd.findAll("#diagnosis-chart circle.stall")
		return len(stalls) > 0
	})
	if n := len(wd.findAll("#diagnosis-chart circle.gap")); n < 100 {
		t.Errorf("the chart draws %d gaps, want one per token after the first (119)", n)
	}
	for _, m := range stallMarks(t, wd) {
		if m.Reason != "actor_prefill" || m.Fill != "rgb(232, 89, 12)" || m.Fill != m.Legend {
			t.Errorf("stalled gap of token %s drawn with reason %q fill %q (its legend swatch: %q), want actor_prefill in #e8590c",
				m.Index, m.Reason, m.Fill, m.Legend)
		}
	}
	if got := wd.textOf("#diagnosis-chart .threshold-label"); !strings.HasPrefix(got, "stall threshold ") {
		t.Errorf("threshold label = %q", got)
	}
	if _, ok := wd.tryFind("#diagnosis-chart line.threshold"); !ok {
		t.Error("no threshold line in the chart")
	}
	tip := wd.script(`const c = document.querySelector("#diagnosis-chart circle.stall");
		const r = c.getBoundingClientRect();
		document.getElementById("diagnosis-chart").dispatchEvent(new MouseEvent("mousemove",
			{clientX: r.x + r.width / 2, clientY: r.y + r.height / 2, bubbles: true}));
		return document.getElementById("diagnosis-tooltip").innerText`)
	for _, k := range []string{"object", "source", "token_index", "token_id", "ready_ms", "producer_delivered_ms",
		"handler_received_ms", "body_enqueued_ms", "response_delivery_ms", "handler_queue_ms", "queue_delay_ms",
		"client_delivery_ms", "blocking_phase", "blocking_phase_ms"} {
		if !strings.Contains(tip, k) {
			t.Errorf("the hover over a stalled gap lacks %s:\n%s", k, tip)
		}
	}
	if !strings.Contains(tip, "actor_prefill") {
		t.Errorf("the hover over a stalled gap does not show its blocking phase:\n%s", tip)
	}
	wd.screenshot(filepath.Join(repoRoot(t), "e2e-artifacts", "dashboard-diagnosis.png"))

	links := wd.findAll("#diagnosis-stalls a.blocker-link")
	if len(links) == 0 {
		t.Fatalf("the stalled gaps name no blocking request:\n%s", wd.textOf("#diagnosis-body"))
	}
	for _, l := range links {
		if got := wd.attr(l, "data-request-id"); got != blockerID {
			t.Errorf("blocking request = %q, want the long-prompt request %q", got, blockerID)
		}
		if got := wd.text(l); got != blockerID {
			t.Errorf("blocker link text = %q, want the id %q", got, blockerID)
		}
	}
	if got := wd.textOf("#diagnosis-stalls tbody tr:first-child td:nth-child(3)"); got != "actor_prefill" {
		t.Errorf("first stalled gap's reason = %q", got)
	}
	if got := wd.textOf(`#diagnosis-explain li[data-reason="actor_prefill"]`); !strings.Contains(got, "--prefill-chunk") {
		t.Errorf("actor_prefill sentence = %q, want it to name --prefill-chunk", got)
	}
	if got := wd.textOf("#diagnosis-phases-shared"); !strings.Contains(got, "Prefill of other requests' prompts") {
		t.Errorf("shared-work phases lack the other requests' prefill:\n%s", got)
	}
	if got := wd.textOf(`#diagnosis-phases-own tr[data-phase="prefill_ms"] th`); !strings.HasPrefix(got, "Prefill before the first token") {
		t.Errorf("own prefill row = %q", got)
	}
	wd.script(`document.getElementById("diagnosis-stalls").scrollIntoView(); return ""`)
	wd.screenshot(filepath.Join(repoRoot(t), "e2e-artifacts", "dashboard-diagnosis-phases.png"))
	checkPhaseLists(t, wd)
}

// TestDashboardAccessToken runs kiln serve with --access-token: the page
// asks for the token when the API answers 401, and works once the token is
// given in the form or in the URL fragment (#token=...).
func TestDashboardAccessToken(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	const token = "e2e-dashboard-token"
	wd := startWebDriver(t)
	srv := startServe(t, "--access-token", token)
	chatWithToken(t, srv.URL, token)

	// The page and its assets load without the token (a browser cannot
	// send it on navigation); every data endpoint refuses it.
	base := srv.URL
	for path, want := range map[string]int{
		"/ui": http.StatusOK, "/ui/dashboard.js": http.StatusOK,
		"/v1/stats/decode": http.StatusUnauthorized, "/v1/stats/recent-requests": http.StatusUnauthorized,
	} {
		if got := getStatus(t, srv.URL+path, ""); got != want {
			t.Errorf("GET %s without the token: %d, want %d", path, got, want)
		}
	}
	defer wd.screenshot(filepath.Join(repoRoot(t), "e2e-artifacts", "dashboard-token.png"))

	// No token: the form, no data.
	wd.navigate(base + "/ui")
	wd.waitVisible("#token-form")
	if got := wd.textOf("#refresh-status"); got != "Access token required" {
		t.Errorf("refresh status = %q, want \"Access token required\"", got)
	}
	if n := len(wd.findAll("#recent-rows tr")); n != 0 {
		t.Errorf("without a token the list shows %d rows", n)
	}
	if _, shown := wd.tryFindVisible("#decode"); shown {
		t.Errorf("without a token the decode panel is shown")
	}
	wd.screenshot(filepath.Join(repoRoot(t), "e2e-artifacts", "dashboard-token-prompt.png"))

	// The form: the token is kept in sessionStorage and sent.
	wd.sendKeys(wd.find("#token-input"), token)
	wd.click(wd.find(`#token-form button[type="submit"]`))
	wd.waitFor(20*time.Second, "a request row after the token was entered", func() bool {
		return len(wd.findAll("#recent-rows tr")) == 1
	})
	if got := wd.script(`return sessionStorage.getItem("kiln.accessToken")`); got != token {
		t.Errorf("sessionStorage token = %q, want the entered token", got)
	}

	// A wrong token is rejected, forgotten, and the form comes back.
	wd.script(`sessionStorage.setItem("kiln.accessToken", "wrong"); return ""`)
	wd.navigate("about:blank")
	wd.navigate(base + "/ui")
	wd.waitVisible("#token-form")
	if got := wd.textOf("#token-message"); !strings.Contains(got, "rejected") {
		t.Errorf("token message after a wrong token = %q, want it to say rejected", got)
	}
	if got := wd.script(`return String(sessionStorage.getItem("kiln.accessToken"))`); got != "null" {
		t.Errorf("a rejected token stays in sessionStorage: %q", got)
	}

	// A fresh load with #token=: works, and the token leaves the address bar.
	wd.navigate("about:blank")
	wd.navigate(base + "/ui#token=" + url.QueryEscape(token))
	wd.waitFor(20*time.Second, "a request row with #token=", func() bool {
		return len(wd.findAll("#recent-rows tr")) == 1
	})
	if got := wd.script(`return location.href`); strings.Contains(got, token) {
		t.Errorf("the token is still in the URL: %q", got)
	}
	if _, shown := wd.tryFindVisible("#token-form"); shown {
		t.Errorf("the token form is still shown with a valid token")
	}
	if got := wd.textOf("#refresh-status"); got != "Live — refreshes every 2 s" {
		t.Errorf("refresh status = %q", got)
	}
}

// chatWithToken sends one short non-streaming chat request with the token.
func chatWithToken(t *testing.T, base, token string) {
	t.Helper()
	body := `{"model":"kiln-tiny","max_tokens":4,"temperature":0,"messages":[{"role":"user","content":"hi"}]}`
	req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat with token: HTTP %d: %s", resp.StatusCode, out)
	}
}

func getStatus(t *testing.T, u, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// ---- a minimal W3C WebDriver client ----

// webDriver is one chromedriver process with one headless Chromium session.
type webDriver struct {
	t      *testing.T
	base   string // http://127.0.0.1:port/session/<id>
	client *http.Client
}

const webElementKey = "element-6066-11e4-a52e-4f735466cecf"

var errNoSuchElement = errors.New("no such element")

// startWebDriver starts chromedriver and a headless Chromium session; both
// stop when the test ends.
func startWebDriver(t *testing.T) *webDriver {
	t.Helper()
	chromium := requireTool(t, "chromium")
	driver := requireTool(t, "chromedriver")
	profile := t.TempDir()

	addr := freeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(driver, "--port="+port)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	transport := &http.Transport{}
	wd := &webDriver{t: t, base: "http://" + addr, client: &http.Client{Transport: transport, Timeout: 2 * time.Minute}}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		var exit error
		select {
		case exit = <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			exit = <-done
		}
		transport.CloseIdleConnections()
		if t.Failed() {
			t.Logf("chromedriver (exit: %v) output:\n%s", exit, logs.String())
		}
	})

	waitFor(t, 30*time.Second, "chromedriver to be ready", func() bool {
		var st struct {
			Ready bool `json:"ready"`
		}
		err := wd.call(http.MethodGet, "/status", nil, &st)
		return err == nil && st.Ready
	})

	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": chromium,
			"args": []string{
				"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
				"--disable-quic", "--no-first-run", "--disable-background-networking",
				"--disable-component-update", "--disable-sync", "--disable-extensions",
				"--user-data-dir=" + profile, "--window-size=1600,1400", "--lang=en-US",
			},
		},
	}}}
	var session struct {
		SessionID string `json:"sessionId"`
	}
	if err := wd.call(http.MethodPost, "/session", caps, &session); err != nil {
		t.Fatalf("new WebDriver session: %v\nchromedriver:\n%s", err, logs.String())
	}
	wd.base += "/session/" + session.SessionID
	// Deleting the session quits Chromium; registered after the driver's
	// cleanup, so it runs first.
	t.Cleanup(func() {
		if err := wd.call(http.MethodDelete, "", nil, nil); err != nil {
			t.Errorf("delete WebDriver session: %v", err)
		}
	})
	return wd
}

// call sends one WebDriver command and decodes its "value" into out.
func (wd *webDriver) call(method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, wd.base+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := wd.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: HTTP %d, not JSON: %.200s", method, path, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(env.Value, &e)
		if e.Error == "no such element" {
			return fmt.Errorf("%s %s: %w: %s", method, path, errNoSuchElement, e.Message)
		}
		return fmt.Errorf("%s %s: HTTP %d: %s: %s", method, path, resp.StatusCode, e.Error, e.Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(env.Value, out)
}

func (wd *webDriver) must(method, path string, body, out any) {
	wd.t.Helper()
	if err := wd.call(method, path, body, out); err != nil {
		wd.t.Fatal(err)
	}
}

func (wd *webDriver) navigate(u string) {
	wd.t.Helper()
	wd.must(http.MethodPost, "/url", map[string]string{"url": u}, nil)
}

func (wd *webDriver) tryFind(css string) (string, bool) {
	wd.t.Helper()
	var el map[string]string
	err := wd.call(http.MethodPost, "/element", map[string]string{"using": "css selector", "value": css}, &el)
	if errors.Is(err, errNoSuchElement) {
		return "", false
	}
	if err != nil {
		wd.t.Fatal(err)
	}
	return el[webElementKey], true
}

func (wd *webDriver) find(css string) string {
	wd.t.Helper()
	el, ok := wd.tryFind(css)
	if !ok {
		wd.t.Fatalf("no element matches %q", css)
	}
	return el
}

func (wd *webDriver) findIn(parent, css string) string {
	wd.t.Helper()
	var el map[string]string
	err := wd.call(http.MethodPost, "/element/"+parent+"/element", map[string]string{"using": "css selector", "value": css}, &el)
	if err != nil {
		wd.t.Fatalf("find %q in element: %v", css, err)
	}
	return el[webElementKey]
}

func (wd *webDriver) findAll(css string) []string {
	wd.t.Helper()
	var els []map[string]string
	wd.must(http.MethodPost, "/elements", map[string]string{"using": "css selector", "value": css}, &els)
	ids := make([]string, len(els))
	for i, el := range els {
		ids[i] = el[webElementKey]
	}
	return ids
}

// text is an element's rendered text (WebDriver "Get Element Text").
func (wd *webDriver) text(el string) string {
	wd.t.Helper()
	var s string
	wd.must(http.MethodGet, "/element/"+el+"/text", nil, &s)
	return s
}

// visibleText returns the rendered text of the first element matching css
// when it is visible, read in one script call: the page re-renders the
// diagnosis when its detail arrives, so an element found in one call may
// be stale in the next.
func (wd *webDriver) visibleText(css string) (string, bool) {
	wd.t.Helper()
	var v *string
	wd.must(http.MethodPost, "/execute/sync", map[string]any{
		"script": `const el = document.querySelector(arguments[0]);
			return el && el.checkVisibility() ? el.innerText : null;`,
		"args": []any{css},
	}, &v)
	if v == nil {
		return "", false
	}
	return *v, true
}

func (wd *webDriver) textOf(css string) string {
	wd.t.Helper()
	return wd.text(wd.find(css))
}

func (wd *webDriver) attr(el, name string) string {
	wd.t.Helper()
	var s *string
	wd.must(http.MethodGet, "/element/"+el+"/attribute/"+name, nil, &s)
	if s == nil {
		return ""
	}
	return *s
}

func (wd *webDriver) displayed(el string) bool {
	wd.t.Helper()
	var ok bool
	wd.must(http.MethodGet, "/element/"+el+"/displayed", nil, &ok)
	return ok
}

func (wd *webDriver) tryFindVisible(css string) (string, bool) {
	wd.t.Helper()
	el, ok := wd.tryFind(css)
	return el, ok && wd.displayed(el)
}

func (wd *webDriver) waitVisible(css string) {
	wd.t.Helper()
	wd.waitFor(20*time.Second, css+" to be shown", func() bool {
		_, ok := wd.tryFindVisible(css)
		return ok
	})
}

func (wd *webDriver) click(el string) {
	wd.t.Helper()
	wd.must(http.MethodPost, "/element/"+el+"/click", map[string]any{}, nil)
}

func (wd *webDriver) sendKeys(el, text string) {
	wd.t.Helper()
	wd.must(http.MethodPost, "/element/"+el+"/value", map[string]string{"text": text}, nil)
}

// script runs synchronous JavaScript in the page; its result is returned
// as a string.
func (wd *webDriver) script(js string) string {
	wd.t.Helper()
	var v any
	wd.must(http.MethodPost, "/execute/sync", map[string]any{"script": js, "args": []any{}}, &v)
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// waitFor is the package's waitFor; on timeout it also saves what the page
// showed.
func (wd *webDriver) waitFor(timeout time.Duration, what string, cond func() bool) {
	wd.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			var body string
			_ = wd.call(http.MethodPost, "/execute/sync", map[string]any{"script": "return document.body.innerText", "args": []any{}}, &body)
			wd.t.Fatalf("timed out after %v waiting for %s; the page shows:\n%s", timeout, what, body)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// screenshot saves the page as a PNG and logs where.
func (wd *webDriver) screenshot(path string) {
	wd.t.Helper()
	var b64 string
	if err := wd.call(http.MethodGet, "/screenshot", nil, &b64); err != nil {
		wd.t.Errorf("screenshot: %v", err)
		return
	}
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		wd.t.Errorf("screenshot: %v", err)
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		wd.t.Errorf("screenshot: %v", err)
		return
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		wd.t.Errorf("screenshot: %v", err)
		return
	}
	wd.t.Logf("dashboard screenshot: %s", path)
}

// TestDashboardOddData serves the page's files beside a fake API that
// answers what a real server rarely does on demand: a truncated summary, a
// request without a summary, one without any token, text that looks like
// HTML, an API error, a disabled ring. The page must say so plainly and
// never interpret server text as markup.
func TestDashboardOddData(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; -short skips it")
	}
	wd := startWebDriver(t)
	const hostile = `<img src=x onerror="window.__xss=1">`
	truncated := fakeLatency(func(l map[string]any) {
		l["gap_samples"], l["retained_gap_samples"], l["gap_samples_truncated"] = 20000, 8192, true
		l["stall_count"], l["unexplained_stall_count"] = 5, 2
		reasons := l["stall_reasons"].(map[string]any)
		reasons["actor_decode"], reasons["unexplained"] = 3, 2
	})
	noToken := fakeLatency(func(l map[string]any) {
		l["emitted_tokens"], l["gap_samples"], l["retained_gap_samples"] = 0, 0, 0
		for _, k := range []string{"ttft_ms", "itl_ms_p50", "itl_ms_p99", "itl_ms_p999", "max_itl_ms", "stall_threshold_ms"} {
			l[k] = nil
		}
	})
	// The truncated record's prompt reused most of a shared prefix.
	reused := fakeRecord("chatcmpl-truncated", "length", truncated)
	reused["prompt_tokens"] = 1100
	reused["prefix_cache"] = map[string]any{"cached_tokens": 1024, "prefilled_tokens": 76, "source": "shared_prefix", "stop_reason": "diverged"}
	api := &fakeAPI{
		decode: map[string]any{"sample_count": 0, "tok_per_sec": 0, "p50_itl_ms": 0, "p99_itl_ms": 0, "p999_itl_ms": 0,
			"mean_itl_ms": 0, "max_itl_ms": 0, "stall_threshold_ms": 250, "stall_count": 0, "unexplained_stall_count": 0,
			"stall_reasons": fakeLatency(nil)["stall_reasons"], "window_secs": 60},
		recent: map[string]any{"object": "list", "capacity": 100, "text_capture": false, "data": []any{
			reused,
			fakeRecord("chatcmpl-nosummary", "error", nil),
			fakeRecord("chatcmpl-notoken", "timeout", noToken),
			fakeRecord(hostile, hostile, fakeLatency(nil)),
		}},
	}
	base := api.start(t)
	wd.navigate(base + "/ui")
	wd.waitFor(20*time.Second, "four request rows", func() bool { return len(wd.findAll("#recent-rows tr")) == 4 })
	if got, want := wd.textOf("#decode-idle"), "No decode gaps in the last 60 s."; got != want {
		t.Errorf("decode idle state = %q, want %q", got, want)
	}
	rows := wd.findAll("#recent-rows tr")
	var stalled []string
	for _, r := range rows {
		stalled = append(stalled, wd.attr(r, "data-stalled"))
	}
	if diff := cmp.Diff([]string{"true", "false", "false", "false"}, stalled); diff != "" {
		t.Errorf("data-stalled per row (-want +got):\n%s", diff)
	}
	if got := wd.text(wd.findIn(rows[0], ".badge.stall")); !strings.Contains(got, "5 stalls · actor_decode") {
		t.Errorf("stall badge = %q, want 5 stalls with the dominant reason actor_decode", got)
	}

	for _, tc := range []struct {
		name string
		id   string
		want map[string]string // selector -> substring of its text
	}{
		{"truncated", "chatcmpl-truncated", map[string]string{
			"#diagnosis-coverage": "8,192 of 20,000 gaps retained — truncated: newest 8,192 kept",
			"#diagnosis-reasons":  "actor_decode × 3",
			"#diagnosis-summary":  "Unexplained stalls\n2",
			"#diagnosis-prefix-cache": "Prefix cache: reused 1,024 of 1,100 prompt tokens (shared_prefix); stopped: diverged at token 1,024 — " +
				"the cache held a continuation that differs there",
			// The fake API has no detail route: said in the panel, not as
			// a refresh failure.
			"#diagnosis-detail-status": "The per-token detail is not available: /v1/stats/recent-requests/chatcmpl-truncated: HTTP 404",
		}},
		{"no summary", "chatcmpl-nosummary", map[string]string{
			"#diagnosis-body": "No latency summary was recorded for this request.",
		}},
		{"no token", "chatcmpl-notoken", map[string]string{
			"#diagnosis-body":         "No token was emitted, so TTFT and ITL are null",
			"#diagnosis-summary":      "TTFT\n—",
			"#diagnosis-coverage":     "0 of 0 gaps retained",
			"#diagnosis-prefix-cache": "Prefix cache: reused none of 12 prompt tokens; stopped: uncached at token 0",
		}},
		{"markup in server text", hostile, map[string]string{
			"#diagnosis-id":   hostile,
			"#diagnosis-body": "finish " + hostile,
		}},
		{"evicted or unknown", "chatcmpl-gone", map[string]string{
			"#diagnosis-hint": "Request chatcmpl-gone is not in the recent-requests list",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wd.navigate(base + "/ui#request=" + url.QueryEscape(tc.id))
			for sel, want := range tc.want {
				var got string
				wd.waitFor(10*time.Second, fmt.Sprintf("%s to show %q", sel, want), func() bool {
					var ok bool
					got, ok = wd.visibleText(sel)
					return ok && strings.Contains(got, want)
				})
			}
		})
	}
	if got := wd.script(`return String(window.__xss) + " " + document.querySelectorAll("main img").length`); got != "undefined 0" {
		t.Errorf("server text was interpreted as markup: window.__xss, <img> count = %q", got)
	}

	// An API error is shown, and cleared once the API answers again.
	api.setDecodeStatus(http.StatusInternalServerError)
	wd.waitVisible("#error")
	if got := wd.textOf("#error"); !strings.Contains(got, "/v1/stats/decode: HTTP 500 — fake failure") {
		t.Errorf("error display = %q", got)
	}
	if got := wd.textOf("#refresh-status"); !strings.HasPrefix(got, "Refresh failed") {
		t.Errorf("refresh status during the failure = %q", got)
	}
	api.setDecodeStatus(http.StatusOK)
	wd.waitFor(10*time.Second, "the error display to clear", func() bool {
		_, shown := wd.tryFindVisible("#error")
		return !shown
	})

	// A server with the ring disabled says so.
	api.setRecent(map[string]any{"object": "list", "capacity": 0, "text_capture": false, "data": []any{}})
	wd.waitVisible("#recent-empty")
	if got := wd.textOf("#recent-empty"); !strings.Contains(got, "--recent-requests 0") {
		t.Errorf("disabled ring message = %q", got)
	}
}

// fakeAPI answers /v1/stats/decode, /v1/stats/recent-requests and the
// detail records of details (by id; 404 for any other) with canned JSON
// and serves /ui from the repository's server/ui. maintenance, trainQueue
// and config, when set, answer /v1/maintenance/recent, /v1/train/queue and
// /v1/config (404 otherwise).
type fakeAPI struct {
	mu           sync.Mutex
	decode       any
	recent       any
	details      map[string]any
	decodeStatus int
	maintenance  any
	trainQueue   any
	config       any
}

func (f *fakeAPI) setTrainQueue(v any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.trainQueue = v
}

func (f *fakeAPI) setDecodeStatus(code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decodeStatus = code
}

func (f *fakeAPI) setRecent(v any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recent = v
}

func (f *fakeAPI) start(t *testing.T) string {
	t.Helper()
	files := os.DirFS(filepath.Join(repoRoot(t), "server", "ui"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		decode, recent, status := f.decode, f.recent, f.decodeStatus
		detail, hasDetail := f.details[strings.TrimPrefix(r.URL.Path, "/v1/stats/recent-requests/")]
		optional := map[string]any{"/v1/maintenance/recent": f.maintenance, "/v1/train/queue": f.trainQueue, "/v1/config": f.config}
		f.mu.Unlock()
		var body any
		switch {
		case optional[r.URL.Path] != nil:
			body = optional[r.URL.Path]
		case strings.HasPrefix(r.URL.Path, "/v1/stats/recent-requests/") && hasDetail:
			body = detail
		case r.URL.Path == "/v1/stats/decode" && status != 0 && status != http.StatusOK:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"message": "fake failure", "type": "server_error", "param": nil, "code": nil}})
			return
		case r.URL.Path == "/v1/stats/decode":
			body = decode
		case r.URL.Path == "/v1/stats/recent-requests":
			body = recent
		case r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, "/ui/"):
			name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/ui"), "/")
			if name == "" {
				name = "index.html"
			}
			http.ServeFileFS(w, r, files, name)
			return
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// fakeLatency is a request summary (docs/latency-guide.md#the-request-summary-latency) of a 10-token request without a
// stall; mod (if not nil) changes it.
func fakeLatency(mod func(map[string]any)) map[string]any {
	reasons := map[string]any{}
	for _, r := range []string{"actor_queue", "actor_admission", "actor_prefill", "actor_decode", "actor_cycle_idle",
		"response_delivery", "handler_queue", "client_delivery", "sampling", "readback", "gpu_lock_wait",
		"graph_capture", "graph_replay", "synchronization", "resize", "trim", "adapter", "training", "unexplained"} {
		reasons[r] = 0
	}
	phases := map[string]any{}
	for _, p := range []string{"actor_queue_ms", "actor_admission_ms", "tokenization_ms", "prefill_ms", "decode_ms",
		"actor_cycle_idle_ms", "sampling_ms", "readback_ms", "response_delivery_ms", "handler_queue_ms",
		"client_delivery_ms", "gpu_lock_wait_ms", "graph_capture_ms", "graph_replay_ms", "synchronization_ms",
		"resize_ms", "trim_ms", "adapter_ms", "training_ms", "unexplained_ms"} {
		phases[p] = nil
	}
	phases["prefill_ms"], phases["decode_ms"], phases["actor_cycle_idle_ms"] = 12.5, 40.25, 0
	l := map[string]any{
		"emitted_tokens": 10, "gap_samples": 9, "retained_gap_samples": 9, "gap_samples_truncated": false,
		"ttft_ms": 13.0, "itl_ms_p50": 4.0, "itl_ms_p99": 6.5, "itl_ms_p999": 6.9, "max_itl_ms": 7.0,
		"stall_threshold_ms": 250.0, "stall_count": 0, "unexplained_stall_count": 0,
		"stall_reasons": reasons, "phases": phases,
	}
	if mod != nil {
		mod(l)
	}
	return l
}

// fakeRecord is a recent-requests entry (docs/http-api.md#get-v1statsrecent-requests); latency may be nil.
func fakeRecord(id, finish string, latency map[string]any) map[string]any {
	r := map[string]any{
		"id": id, "time": "2026-01-02T03:04:05.123Z", "model": "kiln-tiny",
		"prompt_tokens": 12, "completion_tokens": 10, "duration_ms": 60.5, "streamed": true,
		"finish_reason": finish, "latency": nil, "prompt": nil, "completion": nil,
		"prefix_cache": map[string]any{"cached_tokens": 0, "prefilled_tokens": 12, "source": nil, "stop_reason": "uncached"},
	}
	if latency != nil {
		r["latency"] = latency
	}
	return r
}
