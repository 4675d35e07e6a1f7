// Kiln dashboard: polls GET /v1/stats/decode, GET
// /v1/stats/recent-requests and GET /v1/maintenance/recent every
// REFRESH_MS while the tab is visible and renders the decode panel, the
// recent-requests table, the maintenance panel and the Latency diagnosis
// of the request named in the URL fragment (#request=<id>; with
// &operation=<id>, that Maintenance panel row is highlighted). GET
// /v1/config is read until it answers once: the diagnosis's sentences name
// this server's settings.
//
// Server data is only ever inserted with textContent / text nodes, never
// as HTML. The access token (when the server has one) comes from the token
// form or from #token=<token>, is kept in sessionStorage and sent as
// "Authorization: Bearer <token>" on every fetch.

import {
  $, REASONS, REASON_LABEL, PHASES, h, isNum, fixed, fmtMs, fmtCount, fmtRate, fmtTime, plural, prefixCacheText, constraintText,
} from "./format.js";
import { renderDetail } from "./diagnosis.js";
import { renderMaintenance, highlightOperation } from "./maintenance.js";
import "./training.js"; // the training panel polls on its own

const REFRESH_MS = 2000;
const FETCH_TIMEOUT_MS = 5000;
const TOKEN_KEY = "kiln.accessToken";

// The API lives beside /ui: this module is <prefix>/ui/dashboard.js.
const api = (path) => new URL("../" + path, import.meta.url);
const DECODE_PATH = "v1/stats/decode";
const RECENT_PATH = "v1/stats/recent-requests";
const MAINTENANCE_PATH = "v1/maintenance/recent";
const CONFIG_PATH = "v1/config";
const DETAIL_PATH = (id) => RECENT_PATH + "/" + encodeURIComponent(id);

// nonZeroReasons lists [reason, count] with count > 0 in the contract's
// order, then any reason this page does not know yet.
function nonZeroReasons(reasons) {
  if (!reasons || typeof reasons !== "object") return [];
  const known = REASONS.map(([r]) => r).filter((r) => isNum(reasons[r]) && reasons[r] > 0);
  const extra = Object.keys(reasons).filter((r) => !REASON_LABEL.has(r) && isNum(reasons[r]) && reasons[r] > 0);
  return [...known, ...extra].map((r) => [r, reasons[r]]);
}

// dominantReason is the reason with the most stalls (the later one in the
// contract's order on a tie, as in attribution).
function dominantReason(reasons) {
  let best = null;
  for (const [r, n] of nonZeroReasons(reasons)) {
    if (!best || n >= best[1]) best = [r, n];
  }
  return best ? best[0] : "";
}

function reasonItems(reasons, emptyText) {
  const items = nonZeroReasons(reasons).map(([r, n]) =>
    h("li", { class: "stall", data: { reason: r }, title: REASON_LABEL.get(r) || r },
      h("code", null, r), ` × ${fmtCount(n)}`));
  return items.length ? items : [h("li", { class: "none" }, emptyText)];
}

// ---- fetching ----

class AuthError extends Error {}

async function getJSON(path) {
  const headers = { Accept: "application/json" };
  if (state.token) headers.Authorization = "Bearer " + state.token;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), FETCH_TIMEOUT_MS);
  let res;
  try {
    res = await fetch(api(path), { headers, cache: "no-store", credentials: "omit", signal: ctl.signal });
  } catch (err) {
    const why = err && err.name === "AbortError" ? `no answer within ${FETCH_TIMEOUT_MS / 1000} s` : "the server could not be reached";
    throw new Error(`/${path}: ${why}`);
  } finally {
    clearTimeout(timer);
  }
  if (res.status === 401) throw new AuthError(`/${path}: HTTP 401`);
  if (!res.ok) {
    let detail = res.statusText;
    try {
      const body = await res.json();
      if (body && body.error && typeof body.error.message === "string") detail = body.error.message;
    } catch {
      // not an OpenAI-shaped error: keep the status text
    }
    throw new Error(`/${path}: HTTP ${res.status}${detail ? " — " + detail : ""}`);
  }
  try {
    return await res.json();
  } catch {
    throw new Error(`/${path}: the response is not valid JSON`);
  }
}

// ---- state ----

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || "",
  needToken: false,
  timer: 0,
  inFlight: false,
  loaded: false, // a recent-requests list has been received
  lastList: null, // the latest recent-requests response
  records: new Map(), // id -> record, from the latest list
  selectedId: "",
  operationId: 0, // the Maintenance panel row named by #operation=<id>
  config: null, // GET /v1/config, once it answered
  selected: null, // the selected record, kept after it leaves the ring
  lastOk: null,
  recentKey: "",
  diagnosisKey: "",
  details: new Map(), // id -> {status: "loading" | "ok" | "error", data, error}; a record never changes
};

// readFragment takes #token=... (stored, then removed from the address
// bar and history) and #request=<id> from the URL fragment.
function readFragment() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  const tok = params.get("token");
  if (tok !== null) {
    params.delete("token");
    setToken(tok.trim());
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  }
  state.selectedId = params.get("request") || "";
  const op = Number(params.get("operation"));
  state.operationId = Number.isInteger(op) && op > 0 ? op : 0;
}

function setToken(tok) {
  state.token = tok;
  if (tok) sessionStorage.setItem(TOKEN_KEY, tok);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// ---- refresh loop ----

function schedule() {
  clearTimeout(state.timer);
  state.timer = 0;
  if (document.hidden || state.needToken) return;
  state.timer = setTimeout(refresh, REFRESH_MS);
}

async function refresh() {
  clearTimeout(state.timer);
  if (state.inFlight) return;
  state.inFlight = true;
  let results;
  try {
    results = await Promise.allSettled([getJSON(DECODE_PATH), getJSON(RECENT_PATH), getJSON(MAINTENANCE_PATH),
      state.config ? Promise.resolve(state.config) : getJSON(CONFIG_PATH)]);
  } finally {
    state.inFlight = false;
  }
  // Without the configuration the sentences name the defaults; a server
  // without the route (or a failure) is not a refresh failure.
  const config = results.pop();
  if (config.status === "fulfilled" && config.value && typeof config.value === "object" && !state.config) {
    state.config = config.value;
    state.diagnosisKey = "";
  }
  const maintenance = results.pop(); // its failures show in its panel
  const [decode, recent] = results;
  const failed = results.filter((r) => r.status === "rejected").map((r) => r.reason);
  if (failed.some((e) => e instanceof AuthError)) {
    askForToken(state.token
      ? "The access token was rejected (HTTP 401). Enter the token the server was started with (--access-token)."
      : "");
    return;
  }
  state.needToken = false;
  $("token-form").hidden = true;
  $("main").hidden = false;
  if (decode.status === "fulfilled") renderDecode(decode.value);
  if (recent.status === "fulfilled") renderRecent(recent.value);
  renderMaintenance(maintenance);
  renderDiagnosis();
  showError(failed.map((e) => (e instanceof Error ? e.message : String(e))));
  if (failed.length === 0) state.lastOk = new Date();
  setStatus(failed.length === 0 ? "Live — refreshes every 2 s" : "Refresh failed — retrying every 2 s", failed.length > 0);
  schedule();
}

function setStatus(text, stale) {
  const status = $("refresh-status");
  if (status.textContent !== text) status.textContent = text;
  status.parentElement.classList.toggle("stale", !!stale);
  $("refresh-time").textContent = state.lastOk ? `(last update ${state.lastOk.toLocaleTimeString()})` : "";
}

function showError(messages) {
  const box = $("error");
  const text = messages.length ? "Could not refresh:\n" + messages.join("\n") : "";
  if (box.textContent !== text) box.textContent = text;
  box.hidden = messages.length === 0;
}

function askForToken(message) {
  if (state.token) setToken("");
  state.needToken = true;
  clearTimeout(state.timer);
  const form = $("token-form");
  if (message) $("token-message").textContent = message;
  const wasHidden = form.hidden;
  form.hidden = false;
  $("main").hidden = true; // nothing to show without the token
  showError([]);
  setStatus("Access token required", true);
  if (wasHidden) $("token-input").focus();
}

function onTokenSubmit(ev) {
  ev.preventDefault();
  const input = $("token-input");
  const tok = input.value.trim();
  if (!tok) return;
  input.value = "";
  setToken(tok);
  state.needToken = false;
  $("token-form").hidden = true;
  setStatus("Loading…", false);
  refresh();
}

// ---- decode panel ----

function renderDecode(d) {
  if (!d || typeof d !== "object") return;
  const win = isNum(d.window_secs) ? d.window_secs : 60;
  $("decode-window").textContent = String(win);
  const n = isNum(d.sample_count) ? d.sample_count : 0;
  const idle = $("decode-idle");
  idle.textContent = `No decode gaps in the last ${win} s.`;
  idle.hidden = n > 0;
  $("decode-body").hidden = n === 0;
  if (n === 0) return;
  $("decode-cadence").textContent = `${fmtRate(d.tok_per_sec)} tok/s`;
  $("decode-samples").textContent = fmtCount(n);
  $("decode-p50").textContent = fmtMs(d.p50_itl_ms);
  $("decode-p99").textContent = fmtMs(d.p99_itl_ms);
  $("decode-p999").textContent = fmtMs(d.p999_itl_ms);
  $("decode-mean").textContent = fmtMs(d.mean_itl_ms);
  $("decode-max").textContent = fmtMs(d.max_itl_ms);
  $("decode-threshold").textContent = fmtMs(d.stall_threshold_ms);
  const stalls = $("decode-stalls");
  stalls.textContent = fmtCount(d.stall_count);
  stalls.classList.toggle("stalled", isNum(d.stall_count) && d.stall_count > 0);
  $("decode-unexplained").textContent = fmtCount(d.unexplained_stall_count);
  $("decode-reasons").replaceChildren(...reasonItems(d.stall_reasons, "No stalls in the window."));
}

// ---- recent requests ----

function renderRecent(list) {
  const data = list && Array.isArray(list.data) ? list.data.filter((r) => r && typeof r.id === "string") : [];
  state.loaded = true;
  state.lastList = list;
  state.records = new Map(data.map((r) => [r.id, r]));
  const key = JSON.stringify(data) + "\u0000" + state.selectedId;
  if (key === state.recentKey) return;
  state.recentKey = key;

  const empty = $("recent-empty");
  if (list && list.capacity === 0) {
    empty.textContent = "This server does not record recent requests (--recent-requests 0).";
  } else {
    empty.textContent = "No completed requests yet.";
  }
  empty.hidden = data.length > 0;
  $("recent-table").hidden = data.length === 0;

  // Keep keyboard focus on the same request across a re-render.
  const focusedId = document.activeElement && document.activeElement.closest
    ? document.activeElement.closest("tr")?.dataset.requestId
    : undefined;
  const rows = data.map(recentRow);
  $("recent-rows").replaceChildren(...rows);
  if (focusedId) {
    const again = rows.find((tr) => tr.dataset.requestId === focusedId);
    if (again) again.querySelector("a").focus();
  }
}

function recentRow(r) {
  const lat = r.latency && typeof r.latency === "object" ? r.latency : null;
  const stalls = lat && isNum(lat.stall_count) ? lat.stall_count : 0;
  const [time, iso] = fmtTime(r.time);
  let stallCell;
  if (!lat) {
    stallCell = h("span", { class: "badge", title: "No latency summary" }, "n/a");
  } else if (stalls > 0) {
    const reason = dominantReason(lat.stall_reasons);
    stallCell = h("span", { class: "badge stall", title: "Stalled; dominant reason " + (reason || "unknown") },
      `⚠ ${stalls} ${plural(stalls, "stall", "stalls")}`, reason ? ` · ${reason}` : "");
  } else {
    stallCell = h("span", { class: "badge ok" }, "0");
  }
  const finish = typeof r.finish_reason === "string" ? r.finish_reason : "?";
  return h("tr", {
    data: { requestId: r.id, stalled: String(stalls > 0) },
    "aria-current": r.id === state.selectedId ? "true" : null,
  },
  h("td", null, h("a", { href: "#request=" + encodeURIComponent(r.id), title: r.id, "aria-label": "Request " + r.id },
    h("code", null, shortId(r.id)))),
  h("td", null, stallCell),
  h("td", { title: iso }, time),
  h("td", null, r.streamed === true ? "stream" : r.streamed === false ? "non-stream" : "?"),
  h("td", { class: "num" }, `${fmtCount(r.prompt_tokens)} → ${fmtCount(r.completion_tokens)}`),
  h("td", { class: "num" }, fmtMs(r.duration_ms)),
  h("td", null, h("span", { class: "badge finish-" + finish.replace(/[^a-z_]/g, "") }, finish)),
  h("td", { class: "num" }, fmtMs(lat ? lat.ttft_ms : null)),
  h("td", { class: "num" }, fmtMs(lat ? lat.itl_ms_p99 : null)));
}

// shortId keeps the table narrow: the id's tail, which is what differs
// (the full id is the link's title and the diagnosis heading).
function shortId(id) {
  const tail = id.replace(/^chatcmpl-/, "");
  return tail.length > 12 ? "…" + tail.slice(-12) : tail;
}

function onRowClick(ev) {
  if (ev.target.closest("a")) return; // the link navigates by itself
  const tr = ev.target.closest("tr[data-request-id]");
  if (tr) location.hash = "request=" + encodeURIComponent(tr.dataset.requestId);
}

// ---- Latency diagnosis ----

// loadDetail fetches a record's diagnosis detail once; the page re-renders
// when it arrives. An expired token is left to the refresh loop.
async function loadDetail(id) {
  if (state.details.has(id)) return;
  state.details.set(id, { status: "loading" });
  let entry;
  try {
    entry = { status: "ok", data: (await getJSON(DETAIL_PATH(id))).diagnosis || {} };
  } catch (err) {
    if (err instanceof AuthError) {
      state.details.delete(id);
      return;
    }
    entry = { status: "error", error: err instanceof Error ? err.message : String(err) };
  }
  state.details.set(id, entry);
  if (state.selectedId === id) renderDiagnosis();
}

function renderDiagnosis() {
  const id = state.selectedId;
  const hint = $("diagnosis-hint");
  const body = $("diagnosis-body");
  if (!id) {
    state.selected = null;
    state.diagnosisKey = "";
    hint.textContent = "Choose a request in the list to see its Latency diagnosis.";
    hint.hidden = false;
    body.hidden = true;
    return;
  }
  let rec = state.records.get(id) || null;
  const kept = !rec && state.selected && state.selected.id === id;
  if (kept) rec = state.selected;
  if (!rec) {
    state.diagnosisKey = "";
    hint.textContent = state.loaded
      ? `Request ${id} is not in the recent-requests list (it may have been evicted from the ring).`
      : `Loading request ${id}…`;
    hint.hidden = false;
    body.hidden = true;
    return;
  }
  state.selected = rec;
  loadDetail(id);
  const detail = state.details.get(id);
  const key = JSON.stringify(rec) + (kept ? "\u0000kept" : "") + "\u0000" + (detail ? detail.status : "") + (state.config ? "\u0000config" : "");
  if (key === state.diagnosisKey) return;
  state.diagnosisKey = key;
  hint.hidden = true;
  body.replaceChildren(...diagnosisContent(rec, kept, detail));
  body.hidden = false;
}

function diagnosisContent(rec, kept, detail) {
  const [time, iso] = fmtTime(rec.time);
  const out = [
    h("p", { class: "meta" },
      h("code", { id: "diagnosis-id" }, rec.id), " · ",
      h("time", { datetime: iso }, time), " · ",
      rec.streamed ? "stream" : "non-stream", " · finish ",
      h("strong", null, String(rec.finish_reason ?? "?")), " · adapter ",
      h("strong", { id: "diagnosis-adapter" }, String(rec.adapter_used ?? "base")), " · ",
      `${fmtCount(rec.prompt_tokens)} prompt + ${fmtCount(rec.completion_tokens)} completion tokens · `,
      fmtMs(rec.duration_ms)),
  ];
  if (kept) {
    out.push(h("p", { class: "note" }, "This request has left the recent-requests ring; showing the copy loaded earlier."));
  }
  const prefix = prefixCacheText(rec.prefix_cache, rec.prompt_tokens);
  if (prefix) {
    const pc = rec.prefix_cache;
    out.push(h("p", { class: "prefix-cache", id: "diagnosis-prefix-cache",
      data: { cached: String(pc.cached_tokens), source: String(pc.source ?? ""), stop: String(pc.stop_reason) } },
    h("strong", null, "Prefix cache: "), prefix));
  }
  const constraint = constraintText(rec.constraint);
  if (constraint) {
    const c = rec.constraint;
    out.push(h("p", { class: "constraint", id: "diagnosis-constraint",
      data: { kind: String(c.kind), cacheHit: String(c.cache_hit), truncated: String(c.truncated) } },
    h("strong", null, "Constrained: "), constraint));
  }
  const lat = rec.latency && typeof rec.latency === "object" ? rec.latency : null;
  if (!lat) {
    out.push(h("p", { class: "idle" }, "No latency summary was recorded for this request."));
    return out;
  }

  const stalls = isNum(lat.stall_count) ? lat.stall_count : 0;
  const stat = (label, value, cls) => h("div", null, h("dt", null, label), h("dd", { class: cls }, value));
  out.push(h("dl", { class: "stats", id: "diagnosis-summary" },
    stat("TTFT", fmtMs(lat.ttft_ms)),
    stat("ITL p50", fmtMs(lat.itl_ms_p50)),
    stat("ITL p99", fmtMs(lat.itl_ms_p99)),
    stat("ITL p99.9", fmtMs(lat.itl_ms_p999)),
    stat("ITL max", fmtMs(lat.max_itl_ms)),
    stat("Stall threshold", fmtMs(lat.stall_threshold_ms)),
    stat("Stalls", fmtCount(lat.stall_count), stalls > 0 ? "stalled" : null),
    stat("Unexplained stalls", fmtCount(lat.unexplained_stall_count)),
    stat("Emitted tokens", fmtCount(lat.emitted_tokens))));
  if (lat.ttft_ms === null) {
    out.push(h("p", { class: "note" }, "No token was emitted, so TTFT and ITL are null (not observed)."));
  } else if (lat.itl_ms_p50 === null) {
    out.push(h("p", { class: "note" }, "One token: TTFT but no inter-token gap, so ITL is null."));
  }

  out.push(h("h3", null, "Stall reasons"),
    h("ul", { class: "reasons", id: "diagnosis-reasons" }, reasonItems(lat.stall_reasons, "No stalls.")));

  out.push(h("h3", null, "Gap coverage"), coverageLine(lat));

  out.push(...renderDetail(lat, detail, { requestId: rec.id, config: state.config }));
  return out;
}

function coverageLine(lat) {
  const kept = lat.retained_gap_samples;
  const total = lat.gap_samples;
  const text = `${fmtCount(kept)} of ${fmtCount(total)} ${plural(total, "gap", "gaps")} retained`;
  if (lat.gap_samples_truncated === true) {
    return h("p", { class: "coverage truncated", id: "diagnosis-coverage" }, text,
      ` — truncated: newest ${fmtCount(kept)} kept; percentiles and stall counts describe those.`);
  }
  return h("p", { class: "coverage", id: "diagnosis-coverage" }, text);
}

// ---- start ----

// onOperationLink follows a diagnosis link to a Maintenance panel row
// without re-rendering the page: the address records it (#request=<id>
// &operation=<id>, linkable), the row is highlighted and scrolled to.
function onOperationLink(ev) {
  const a = ev.target instanceof Element ? ev.target.closest("a.operation-link") : null;
  if (!a || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  ev.preventDefault();
  const id = Number(a.dataset.panelId);
  history.pushState(null, "", a.getAttribute("href"));
  state.operationId = id;
  highlightOperation(id);
}

function onHashChange() {
  const before = state.token;
  const opBefore = state.operationId;
  readFragment();
  if (state.operationId !== opBefore) highlightOperation(state.operationId);
  state.recentKey = ""; // re-mark the selected row
  if (state.token !== before) {
    state.needToken = false;
    $("token-form").hidden = true;
    refresh();
    return;
  }
  if (state.lastList) renderRecent(state.lastList);
  renderDiagnosis();
  if (state.selectedId && !state.operationId) $("diagnosis").focus({ preventScroll: window.matchMedia("(min-width: 1450px)").matches });
}

function start() {
  readFragment();
  $("token-form").addEventListener("submit", onTokenSubmit);
  $("recent-rows").addEventListener("click", onRowClick);
  $("diagnosis-body").addEventListener("click", onOperationLink);
  if (state.operationId) highlightOperation(state.operationId);
  window.addEventListener("hashchange", onHashChange);
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) {
      clearTimeout(state.timer);
      if (!state.needToken) setStatus("Paused while this tab is hidden", false);
    } else if (!state.needToken) {
      refresh();
    }
  });
  renderDiagnosis();
  refresh();
}

start();
