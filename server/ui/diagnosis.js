// The detailed part of the Latency diagnosis, drawn from GET
// /v1/stats/recent-requests/{id}: the per-token gap chart, the stalled gaps
// with what blocked them, one sentence per dominant reason, and the phases
// split into the request's own work and the time it was charged for shared
// work. dashboard.js fetches the detail and calls renderDetail.

import { REASON_LABEL, PHASES, h, isNum, fmtMs, fmtCount, plural, roundForPeople, tidyText } from "./format.js";

const SVG = "http://www.w3.org/2000/svg";

// A colour per stall reason (colour-blind-safe where it matters most:
// prefill, decode, lock wait and unexplained differ in hue and lightness).
const REASON_COLOUR = {
  actor_queue: "#7048e8",
  actor_admission: "#0b7285",
  actor_prefill: "#e8590c",
  actor_decode: "#1c7ed6",
  actor_cycle_idle: "#868e96",
  response_delivery: "#f08c00",
  sampling: "#2b8a3e",
  gpu_lock_wait: "#c2255c",
  training: "#862e9c",
  trim: "#66a80f",
  resize: "#1098ad",
  adapter: "#d6336c",
  unexplained: "#343a40",
};
const reasonColour = (r) => REASON_COLOUR[r] || "#ae3ec9";

// What each reason means and which setting moves it: one plain sentence.
// The maintenance reasons' sentences (MAINTENANCE_SENTENCE) name the
// operation's own setting with this server's value where GET /v1/config
// gives it.
const REASON_SENTENCE = {
  actor_queue: "The request waited for a free sequence slot behind other requests; more --slots (or less load) shortens that wait, and --queue-depth bounds how many may wait.",
  actor_admission: "Admitting the request (reserving its KV cache) took the time; --kv-budget and --slots decide how much is reserved up front.",
  actor_prefill: "Another request's long prompt was prefilled in one pass while this one waited for its next token; a smaller --prefill-chunk bounds that pause (long prompts then take a little longer to their first token).",
  actor_decode: "The batched decode step itself was slow: more sequences in the batch or a bigger model make each step longer; a smaller --max-batch or more --threads (up to the CPU cores) shortens it.",
  actor_cycle_idle: "The engine loop sat idle between cycles although a token was due: usually the host was busy with other work; check --threads against the free CPU cores.",
  response_delivery: "The token waited in the request's delivery channel because the handler was not reading it: a slow client, or a full --delivery-buffer.",
  sampling: "Choosing the token from the logits took the time: top_k, top_p and the penalties work over the whole vocabulary; greedy or a small top_k is cheaper.",
  gpu_lock_wait: "The engine waited for the device lock held exclusively by a maintenance operation that no typed phase (training, trim) explains; the pause ends with the operation (see Blocked by) and no serving setting shortens it.",
  unexplained: "No measured phase covers most of this gap: the process was descheduled, paused by the Go runtime, or the machine was overloaded; compare with the host's CPU metrics.",
};

// The configured value of a setting, from GET /v1/config (null when the
// server does not say).
function configured(cfg, key) {
  if (!cfg || typeof cfg !== "object") return null;
  if (key in cfg) return cfg[key];
  return cfg.engine && typeof cfg.engine === "object" && key in cfg.engine ? cfg.engine[key] : null;
}
const onServer = (v, unit) => (isNum(v) ? ` (${unit(v)} on this server)` : "");
const tokensText = (v) => `${fmtCount(v)} tokens`;

const MAINTENANCE_SENTENCE = {
  training: (cfg) => {
    const slice = configured(cfg, "maintenance_slice_ms");
    return "A training step held the device lock, one exclusive slice at a time of at most --maintenance-slice " +
      (isNum(slice) ? `(${roundForPeople(slice)} ms on this server; default 100 ms)` : "(default 100 ms)") +
      ": a smaller slice shortens each pause, and the job takes a little longer. A step is as long as its example's tokens, one per example per epoch, " +
      "so shorter examples or fewer epochs shorten the job; --serving-profile maintenance trains outside the serving hours (inference off).";
  },
  trim: (cfg) => {
    const mode = configured(cfg, "memory_reclaim");
    const base = "A trim (freed memory handed back to the operating system) held the device lock between two forward steps; the pause lasts as long as the trim. ";
    if (mode === "automatic") {
      return base + "This server runs --memory-reclaim automatic, which also trims by itself after 30 s idle; on-demand trims only when POST /v1/maintenance/trim is called.";
    }
    if (mode === "on-demand") {
      return base + "This server runs --memory-reclaim on-demand: trims run only when POST /v1/maintenance/trim is called, so call it outside busy periods.";
    }
    return base + "--memory-reclaim decides when trims run: on-demand only when POST /v1/maintenance/trim is called, automatic also by themselves after 30 s idle.";
  },
  resize: (cfg) => "A KV resize held the actor barrier: it waits for the active requests to drain, and a queued request waits for that drain and the reallocation. " +
    `Resize when the server is quiet, or start with a KV budget that needs none (--kv-budget${onServer(configured(cfg, "kv_budget"), tokensText)}; ` +
    `--kv-max-tokens${onServer(configured(cfg, "kv_max_tokens"), tokensText)} caps what a resize may set); --memory-reclaim automatic resizes by itself.`,
  adapter: () => "An adapter swap held the actor barrier: a request naming an adapter other than the loaded one waits for the active batch to drain, then the swap runs. " +
    "Make the adapter most requests name the server default (POST /v1/adapters/load), or send fewer distinct adapters at once.",
};
// withFlags sets a sentence's command-line flags in code that never
// breaks at its hyphens ("--memory-reclaim" must not wrap as "-" "-memory…").
const withFlags = (text) => text.split(/(--[a-z][a-z-]*(?: (?:maintenance|on-demand|automatic))?)/).map((part, i) => (i % 2 ? h("code", { class: "flag" }, part) : part));

const OP_REASON = { training_step: "training", training_job: "training", trim: "trim", resize: "resize", adapter_swap: "adapter" };

// The phases a request spends on its own work; everything else measured
// is time it was charged for work shared with, or done for, others.
const OWN = ["tokenization_ms", "actor_admission_ms", "prefill_ms", "decode_ms", "sampling_ms",
  "response_delivery_ms", "handler_queue_ms", "client_delivery_ms"];
const PHASE_LABEL = new Map(PHASES);

// gapsOf turns the token events into gaps: token index, gap since the
// previous token, the event (14 fields). The oldest retained token has no
// previous one kept and starts no gap.
function gapsOf(tokens) {
  const out = [];
  for (let i = 1; i < tokens.length; i++) {
    const e = tokens[i];
    const prev = tokens[i - 1];
    if (!isNum(e.ready_ms) || !isNum(prev.ready_ms)) continue;
    out.push({ index: e.token_index, gap: Math.max(e.ready_ms - prev.ready_ms, 0), event: e });
  }
  return out;
}

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

const decadeLabel = (v) => (v >= 1000 ? `${v / 1000} s` : `${v} ms`);

// gapChart draws the gaps: x the token index, y the gap on a log scale,
// the threshold as a dashed line, and the stalled gaps (at or above it)
// as stallMarks on top. Hovering shows the token's 14 timing fields.
// The y axis's title sits above the plot, left-aligned, and the left
// margin fits the longest decade label: no tick label can run into it.
function gapChart(gaps, threshold) {
  const values = gaps.map((g) => Math.max(g.gap, 0.001));
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...values))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...values, isNum(threshold) ? threshold : 0) * 1.05)));
  const decades = [];
  for (let v = lo; v <= hi * 1.0001; v *= 10) decades.push(Number(v.toPrecision(1)));
  const longest = Math.max(...decades.map((v) => decadeLabel(v).length));
  // About 7 px a character at the axis's 11 px, and 8 px of air.
  const W = 720, H = 248, L = Math.max(40, 8 + 7 * longest), R = 14, T = 26, B = 34;
  const x0 = gaps[0].index, x1 = Math.max(gaps[gaps.length - 1].index, x0 + 1);
  const X = (i) => L + ((i - x0) / (x1 - x0)) * (W - L - R);
  const Y = (v) => T + (1 - (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (H - T - B);

  const chart = svg("svg", { id: "diagnosis-chart", viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": `Inter-token gaps of ${gaps.length} tokens on a log scale; stalled gaps coloured by reason` });
  for (const v of decades) {
    chart.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: Y(v), y2: Y(v) }),
      svg("text", { class: "axis tick", x: L - 6, y: Y(v) + 4, "text-anchor": "end" }, decadeLabel(v)));
  }
  const step = Math.max(1, Math.ceil((x1 - x0) / 8));
  for (let i = x0; i <= x1; i += step) {
    chart.append(svg("text", { class: "axis tick", x: X(i), y: H - B + 16, "text-anchor": "middle" }, String(i)));
  }
  chart.append(svg("text", { class: "axis title", x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, "token index"),
    svg("text", { class: "axis title", id: "diagnosis-y-title", x: 4, y: 13, "text-anchor": "start" }, "gap (ms, log scale)"));
  chart.append(svg("polyline", { class: "cadence", points: gaps.map((g) => `${X(g.index).toFixed(1)},${Y(Math.max(g.gap, 0.001)).toFixed(1)}`).join(" ") }));
  if (isNum(threshold)) {
    chart.append(svg("line", { class: "threshold", x1: L, x2: W - R, y1: Y(threshold), y2: Y(threshold) }),
      svg("text", { class: "threshold-label", x: W - R - 4, y: Y(threshold) - 5, "text-anchor": "end" }, `stall threshold ${fmtMs(threshold)}`));
  }
  const stalled = (g) => isNum(threshold) && g.gap >= threshold;
  for (const g of gaps) {
    if (stalled(g)) continue;
    chart.append(svg("circle", { class: "gap", cx: X(g.index).toFixed(1), cy: Y(Math.max(g.gap, 0.001)).toFixed(1), r: 2.2, "data-index": g.index },
      svg("title", null, `token ${g.index}: gap ${fmtMs(g.gap)}`)));
  }
  chart.append(stallMarks(gaps.filter(stalled), X, Y));
  return { chart, X, L, R, W };
}

const stallReason = (g) => g.event.blocking_phase || "unexplained";

// stallMarks draws one mark per stalled gap, after the line and the plain
// points so nothing covers it. Its fill is its reason's colour, set as an
// inline style so that no stylesheet rule can grey it (the legend promises
// that colour). Stalls on neighbouring tokens often have about the same gap
// (one long pause split over consecutive tokens): a mark closer than two
// full radii to another shrinks to half their distance (down to a visible
// minimum), so neighbours stay apart; an isolated stall keeps the full
// size. Where even the minimum overlaps (thousands of tokens), the white
// outline keeps each a separate disc, with its own title and hover.
const STALL_R = 5, STALL_R_MIN = 2.5;
function stallMarks(stalls, X, Y) {
  const pos = stalls.map((g) => [X(g.index), Y(Math.max(g.gap, 0.001))]);
  const radius = ([x, y], i) => {
    let d = Infinity;
    // stalls are in token order, so x grows: only the marks within two
    // full radii of x can touch this one.
    for (let j = i - 1; j >= 0 && x - pos[j][0] < 2 * STALL_R; j--) d = Math.min(d, Math.hypot(x - pos[j][0], y - pos[j][1]));
    for (let j = i + 1; j < pos.length && pos[j][0] - x < 2 * STALL_R; j++) d = Math.min(d, Math.hypot(x - pos[j][0], y - pos[j][1]));
    return Math.min(STALL_R, Math.max(STALL_R_MIN, d / 2 - 0.5));
  };
  return svg("g", { class: "stall-marks" }, ...stalls.map((g, i) => svg("circle", {
    class: "gap stall", cx: pos[i][0].toFixed(1), cy: pos[i][1].toFixed(1), r: radius(pos[i], i).toFixed(2),
    style: `fill:${reasonColour(stallReason(g))}`, "data-index": g.index, "data-reason": stallReason(g),
  }, svg("title", null, `token ${g.index}: gap ${fmtMs(g.gap)}, stalled: ${stallReason(g)}`))));
}

// tokenFields lists the token's 14 timing fields, in the event's order.
function tokenFields(e) {
  return h("dl", { class: "fields" }, Object.entries(e).map(([k, v]) =>
    h("div", null, h("dt", null, k), h("dd", null, typeof v === "number" ? String(Math.round(v * 1000) / 1000) : String(v)))));
}

function chartSection(detail, lat) {
  const gaps = gapsOf(Array.isArray(detail.tokens) ? detail.tokens : []);
  if (gaps.length === 0) {
    const why = detail.tokens_released
      ? "The per-token timing of this request is no longer kept (only the newest requests keep it)."
      : "No inter-token gap to draw.";
    return [h("h3", null, "Gaps per token"), h("p", { class: "idle", id: "diagnosis-chart-empty" }, why)];
  }
  const threshold = isNum(lat.stall_threshold_ms) ? lat.stall_threshold_ms : null;
  const { chart, X, L, R, W } = gapChart(gaps, threshold);
  const tip = h("div", { class: "tooltip", id: "diagnosis-tooltip", hidden: true });
  const byIndex = new Map(gaps.map((g) => [g.index, g]));
  chart.addEventListener("mousemove", (ev) => {
    const box = chart.getBoundingClientRect();
    const vx = ((ev.clientX - box.left) / box.width) * W;
    if (vx < L || vx > W - R) { tip.hidden = true; return; }
    // Over a stall mark: that stall, even where a neighbour's mark is
    // nearer in x; elsewhere the token nearest the pointer.
    const mark = ev.target instanceof Element ? ev.target.closest("circle.stall") : null;
    let best = mark ? byIndex.get(Number(mark.dataset.index)) : null;
    if (!best) {
      best = gaps[0];
      for (const g of gaps) if (Math.abs(X(g.index) - vx) < Math.abs(X(best.index) - vx)) best = g;
    }
    tip.replaceChildren(h("strong", null, `Token ${best.index} — gap ${fmtMs(best.gap)}`), tokenFields(best.event));
    tip.hidden = false;
    // Below the pointer (above it near the bottom), so the point and its
    // neighbours stay visible; kept inside the chart's width.
    const px = ev.clientX - box.left, py = ev.clientY - box.top;
    tip.style.left = `${Math.max(Math.min(px - tip.offsetWidth / 2, box.width - tip.offsetWidth), 0)}px`;
    tip.style.top = `${py + 14 + tip.offsetHeight <= box.height + 40 ? py + 14 : Math.max(py - tip.offsetHeight - 14, -tip.offsetHeight)}px`;
  });
  chart.addEventListener("mouseleave", () => { tip.hidden = true; });
  const reasons = [...new Set(gaps.filter((g) => threshold !== null && g.gap >= threshold).map(stallReason))];
  const legend = h("ul", { class: "legend", id: "diagnosis-legend" },
    h("li", null, h("span", { class: "swatch plain" }), "gap below the threshold"),
    reasons.map((r) => h("li", { data: { reason: r } },
      h("span", { class: "swatch", style: `background:${reasonColour(r)}` }), `stalled: ${r}`)));
  const first = byIndex.get(gaps[0].index);
  return [h("h3", null, "Gaps per token"),
    h("div", { class: "chart" }, chart, tip), legend,
    h("p", { class: "note" }, `Tokens ${first.index}–${gaps[gaps.length - 1].index}. Hover a point for the token's 14 timing fields.`)];
}

const OP_KIND_LABEL = { training_step: "training step", training_job: "training job", trim: "trim", resize: "KV resize", adapter_swap: "adapter swap" };
const GONE = "an operation no longer in the recent list";

// operationRef names a maintenance operation by its summary; with a
// panel_id it links to that row of the Maintenance panel (the link keeps
// the request open: #request=<id>&operation=<panel_id>).
function operationRef(op, ctx) {
  const text = tidyText(op.summary) || OP_KIND_LABEL[op.kind] || String(op.kind || "a maintenance operation");
  const failed = typeof op.outcome === "string" && /error|fail|cancel/.test(op.outcome) ? ` (${op.outcome})` : "";
  if (!isNum(op.panel_id)) return h("span", { class: "operation" }, text + failed);
  const href = "#" + (ctx.requestId ? "request=" + encodeURIComponent(ctx.requestId) + "&" : "") + "operation=" + op.panel_id;
  return [h("a", { class: "operation-link", href, title: `operation ${op.id}: its row in the Maintenance panel`,
    data: { operationId: String(op.id), panelId: String(op.panel_id), kind: String(op.kind) } }, text), failed];
}

const isOp = (op) => op && typeof op === "object";

// operationItem is one operation row: the named operation (or that it is
// no longer known) and how long it held the device inside the gap.
function operationItem(b, ctx) {
  return h("li", { class: "operation", data: { kind: "operation", operationKind: isOp(b.operation) ? String(b.operation.kind) : "" } },
    isOp(b.operation) ? operationRef(b.operation, ctx) : GONE, ` (${fmtMs(b.duration_ms)})`);
}

// blockedBy says what blocked a stalled gap: a blocking request links to
// its own diagnosis, a maintenance operation to its Maintenance panel row.
// A lock wait's holder that is also listed as an operation row is named
// once; lock waits come after the operations they waited for.
function blockedBy(s, ctx) {
  const blockers = Array.isArray(s.blockers) ? s.blockers.filter((b) => b && typeof b === "object") : [];
  const listed = new Set(blockers.filter((b) => b.kind === "operation" && isOp(b.operation)).map((b) => b.operation.id));
  const items = [], waits = [];
  for (const b of blockers) {
    if (b.kind === "actor_prefill") {
      if (b.self) items.push(h("li", null, `its own prompt's prefill (${fmtMs(b.duration_ms)})`));
      else if (typeof b.request_id === "string") {
        items.push(h("li", null, "prefill of ",
          h("a", { class: "blocker-link", href: "#request=" + encodeURIComponent(b.request_id), data: { requestId: b.request_id } },
            h("code", null, b.request_id)), ` (${fmtMs(b.duration_ms)})`));
      } else items.push(h("li", null, `prefill of a request no longer known (${fmtMs(b.duration_ms)})`));
    } else if (b.kind === "operation") {
      items.push(operationItem(b, ctx));
    } else if (b.kind === "gpu_lock_wait") {
      const wait = `device lock wait (${fmtMs(b.duration_ms)})`;
      let li;
      if (isOp(b.operation) && listed.has(b.operation.id)) {
        li = h("li", { data: { kind: "gpu_lock_wait" } }, `${wait}, held by the ${OP_KIND_LABEL[b.operation.kind] || "operation"} above`);
      } else if (isOp(b.operation)) {
        li = h("li", { data: { kind: "gpu_lock_wait" } }, `${wait}, held by `, operationRef(b.operation, ctx));
      } else if (typeof b.operation === "string") {
        li = h("li", { data: { kind: "gpu_lock_wait" } }, `${wait}, held by ${b.operation}`);
      } else {
        li = h("li", { data: { kind: "gpu_lock_wait" } }, `${wait}, held by ${GONE}`);
      }
      waits.push(li);
    }
  }
  items.push(...waits);
  return items.length ? h("ul", { class: "blockers" }, items) : h("span", { class: "muted" }, "no identified work");
}

// queuedSection lists the barrier operations (KV resize, adapter swap) the
// request waited behind for admission, with what moves that wait.
function queuedSection(detail, ctx) {
  const rows = Array.isArray(detail.queued_behind) ? detail.queued_behind.filter((b) => b && typeof b === "object") : [];
  if (!rows.length) return [];
  const reasons = [...new Set(rows.filter((b) => isOp(b.operation)).map((b) => OP_REASON[b.operation.kind]).filter((r) => MAINTENANCE_SENTENCE[r]))];
  return [h("h3", null, "Queued behind"),
    h("p", { class: "queued-lead" }, "Before its first token, the request waited for admission behind:"),
    h("ul", { class: "blockers", id: "diagnosis-queued-behind" }, rows.map((b) => operationItem(b, ctx))),
    ...reasons.map((r) => h("p", { class: "note", data: { reason: r } }, withFlags(MAINTENANCE_SENTENCE[r](ctx.config))))];
}

function stallSection(detail, ctx) {
  const stalls = Array.isArray(detail.stalls) ? detail.stalls : [];
  const out = [h("h3", null, "Stalled gaps")];
  if (!stalls.length) {
    out.push(h("p", { class: "idle", id: "diagnosis-stalls-empty" }, "No gap reached the stall threshold."));
    return out;
  }
  out.push(h("table", { class: "stalls", id: "diagnosis-stalls" },
    h("thead", null, h("tr", null, h("th", { scope: "col", class: "num" }, "Token"), h("th", { scope: "col", class: "num" }, "Gap"),
      h("th", { scope: "col" }, "Reason"), h("th", { scope: "col" }, "Blocked by"))),
    h("tbody", null, stalls.map((s) => h("tr", { data: { token: String(s.token_index), reason: String(s.reason) } },
      h("td", { class: "num" }, fmtCount(s.token_index)), h("td", { class: "num" }, fmtMs(s.gap_ms)),
      h("td", null, h("span", { class: "swatch", style: `background:${reasonColour(s.reason)}` }), h("code", null, String(s.reason))),
      h("td", { class: "wrap" }, blockedBy(s, ctx)))))));
  if (detail.stalls_dropped > 0) {
    out.push(h("p", { class: "note" }, `${fmtCount(detail.stalls_dropped)} older stalled ${plural(detail.stalls_dropped, "gap is", "gaps are")} not listed (the newest are kept).`));
  }
  return out;
}

// explainSection: one sentence per reason with stalls, the most frequent first.
function explainSection(lat, ctx) {
  const counts = Object.entries(lat.stall_reasons || {}).filter(([, n]) => isNum(n) && n > 0).sort((a, b) => b[1] - a[1]);
  if (!counts.length) return [];
  return [h("h3", null, "What it means"), h("ul", { class: "explain", id: "diagnosis-explain" }, counts.map(([r, n]) =>
    h("li", { data: { reason: r } }, h("strong", null, `${REASON_LABEL.get(r) || r} (${fmtCount(n)} ${plural(n, "stall", "stalls")}): `),
      withFlags(MAINTENANCE_SENTENCE[r] ? MAINTENANCE_SENTENCE[r](ctx.config)
        : REASON_SENTENCE[r] || "A backend phase took most of this gap; see the phase totals below."))))];
}

function phaseRow(key, label, v, title) {
  return h("tr", { data: { phase: key }, title },
    h("th", { scope: "row" }, label, " ", h("code", { class: "raw" }, key.replace(/:.*/, ""))),
    h("td", { class: v === 0 ? "num zero" : "num" }, fmtMs(v)));
}

// phaseSection separates the request's own work from the time it was
// charged for shared work; the phases the backend can never produce (the
// server's not_applicable_phases, GPU-only) are listed once, collapsed.
// A null phase that can occur (a maintenance phase no operation overlapped)
// is "not observed in this request". A measured phase is never listed as
// not applicable, whatever the server's list says: the page must not say
// both.
function phaseSection(lat, detail) {
  const phases = lat.phases && typeof lat.phases === "object" ? lat.phases : {};
  const listed = detail && Array.isArray(detail.not_applicable_phases) ? detail.not_applicable_phases : [];
  const na = new Set(listed.filter((k) => !isNum(phases[k])));
  const known = new Set(PHASES.map(([k]) => k));
  const keys = [...PHASES.map(([k]) => k), ...Object.keys(phases).filter((k) => !known.has(k))];
  const label = (k) => PHASE_LABEL.get(k) || k;
  const own = [], shared = [];
  const pre = phases.prefill_ms;
  const ownPre = detail && isNum(detail.own_prefill_ms) && isNum(pre) ? Math.min(detail.own_prefill_ms, pre) : null;
  for (const k of keys) {
    if (!isNum(phases[k])) continue;
    if (k === "prefill_ms" && ownPre !== null) {
      own.push(phaseRow(k, "Prefill before the first token (its own prompt)", ownPre));
      if (pre - ownPre > 0) shared.push(phaseRow("prefill_ms:others", "Prefill of other requests' prompts, while this one decoded", pre - ownPre));
      continue;
    }
    (OWN.includes(k) ? own : shared).push(phaseRow(k, label(k), phases[k]));
  }
  const out = [h("h3", null, "Phases")];
  const group = (title, rows, note) => rows.length
    ? [h("tr", { class: "group" }, h("th", { colspan: 2, scope: "rowgroup" }, title, h("span", { class: "group-note" }, note))), ...rows]
    : [];
  if (own.length || shared.length) {
    out.push(h("table", { class: "phases", id: "diagnosis-phases" },
      h("caption", { class: "visually-hidden" }, "Measured phases: request-impact wall time"),
      h("thead", null, h("tr", null, h("th", { scope: "col" }, "Phase"), h("th", { scope: "col", class: "num" }, "Wall time"))),
      h("tbody", { id: "diagnosis-phases-own" }, group("Work for this request", own, "its prompt, its tokens, their delivery")),
      h("tbody", { id: "diagnosis-phases-shared" }, group("Charged for shared work", shared, "waiting while the engine served others or was paused"))));
  } else {
    out.push(h("p", { class: "idle" }, "No phase was measured for this request."));
  }
  out.push(h("p", { class: "note" },
    "Phases overlap (decode contains its backend subphases; a shared batched step is charged to every request in it). " +
    "They are not additive: never sum them and compare with the duration. 0 ms means measured as zero."));

  const missing = keys.filter((k) => !isNum(phases[k]) && !na.has(k));
  out.push(h("h3", { id: "not-measured-title" }, "Not observed in this request"));
  out.push(missing.length
    ? h("ul", { class: "not-measured", id: "diagnosis-not-measured", "aria-labelledby": "not-measured-title" },
      missing.map((k) => h("li", { data: { phase: k } }, label(k), " ", h("code", { class: "raw" }, k))))
    : h("p", { class: "idle", id: "diagnosis-not-measured" }, "Every phase that can occur on this backend was measured."));
  if (na.size) {
    const backend = String(detail.backend || "this").toUpperCase();
    out.push(h("details", { class: "not-applicable", id: "diagnosis-not-applicable" },
      h("summary", null, `${na.size} ${plural(na.size, "phase", "phases")} not applicable on the ${backend} backend`),
      h("ul", { class: "not-measured" }, [...na].map((k) => h("li", { data: { phase: k } }, label(k), " ", h("code", { class: "raw" }, k))))));
  }
  return out;
}

// renderDetail returns the diagnosis sections for a record's summary lat
// and its detail: {status: "loading" | "ok" | "error", data, error}. ctx is
// {requestId, config}: the request's id (operation links keep it open) and
// GET /v1/config's reply, or null while the server has not given it.
export function renderDetail(lat, detail, ctx) {
  ctx = { requestId: "", config: null, ...ctx };
  const out = [];
  if (detail && detail.status === "ok") {
    out.push(...chartSection(detail.data, lat), ...queuedSection(detail.data, ctx), ...stallSection(detail.data, ctx), ...explainSection(lat, ctx));
  } else {
    const text = detail && detail.status === "error"
      ? `The per-token detail is not available: ${detail.error}`
      : "Loading the per-token detail…";
    out.push(h("p", { class: "idle", id: "diagnosis-detail-status" }, text), ...explainSection(lat, ctx));
  }
  out.push(...phaseSection(lat, detail && detail.status === "ok" ? detail.data : null));
  return out;
}
