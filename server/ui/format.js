// Shared by the dashboard's modules: the contract's closed sets with their
// labels, the element builder and the number formatting. Server data is
// only ever inserted as text (h never parses HTML).

// The closed stall-reason set, in the contract's order (docs/latency-guide.md#stall-reasons).
export const REASONS = [
  ["actor_queue", "Actor queue"],
  ["actor_admission", "Actor admission"],
  ["actor_prefill", "Prefill"],
  ["actor_decode", "Decode"],
  ["actor_cycle_idle", "Cycle idle"],
  ["response_delivery", "Response delivery"],
  ["handler_queue", "Handler queue"],
  ["client_delivery", "Body enqueue"],
  ["sampling", "Sampling"],
  ["readback", "Readback"],
  ["gpu_lock_wait", "Device lock wait"],
  ["graph_capture", "Graph capture"],
  ["graph_replay", "Graph replay"],
  ["synchronization", "Synchronization"],
  ["resize", "Resize"],
  ["trim", "Trim"],
  ["adapter", "Adapter"],
  ["training", "Training"],
  ["unexplained", "Unexplained"],
];
export const REASON_LABEL = new Map(REASONS);

// The twenty phases (docs/latency-guide.md#phases) with their human labels.
// client_delivery_ms keeps its compatibility name on the wire; what it
// measures is handler receipt to response-body enqueue.
export const PHASES = [
  ["actor_queue_ms", "Actor queue"],
  ["actor_admission_ms", "Actor admission"],
  ["tokenization_ms", "Tokenization"],
  ["prefill_ms", "Prefill"],
  ["decode_ms", "Decode"],
  ["actor_cycle_idle_ms", "Cycle idle"],
  ["sampling_ms", "Sampling"],
  ["readback_ms", "Readback"],
  ["response_delivery_ms", "Response delivery"],
  ["handler_queue_ms", "Handler queue"],
  ["client_delivery_ms", "Body enqueue"],
  ["gpu_lock_wait_ms", "Device lock wait"],
  ["graph_capture_ms", "Graph capture"],
  ["graph_replay_ms", "Graph replay"],
  ["synchronization_ms", "Synchronization"],
  ["resize_ms", "Resize"],
  ["trim_ms", "Trim"],
  ["adapter_ms", "Adapter"],
  ["training_ms", "Training"],
  ["unexplained_ms", "Unexplained"],
];

// The prefix cache's closed stop reasons (docs/latency-guide.md#prefix-cache)
// with what each means for the request.
export const PREFIX_STOPS = new Map([
  ["off", "the prefix cache is off"],
  ["prompt_end", "the prompt's last token is always computed"],
  ["uncached", "the cache held nothing past it"],
  ["diverged", "the cache held a continuation that differs there"],
  ["evicted", "the continuation was cached once and evicted"],
  ["other_adapter", "the continuation is cached only under another adapter or revision"],
]);

// prefixCacheText says in words what a request's prompt took from the
// prefix cache (a record's prefix_cache object): "reused 1,024 of 1,100
// prompt tokens (shared_prefix); stopped: diverged at token 1,024 — the
// cache held a continuation that differs there". null without the object.
export function prefixCacheText(pc, promptTokens) {
  if (!pc || typeof pc !== "object") return null;
  const cached = isNum(pc.cached_tokens) ? pc.cached_tokens : 0;
  const prompt = isNum(promptTokens) ? promptTokens : cached + (isNum(pc.prefilled_tokens) ? pc.prefilled_tokens : 0);
  const stop = String(pc.stop_reason ?? "?");
  if (stop === "off") {
    return `cache off; prefilled ${fmtCount(pc.prefilled_tokens)} of ${fmtCount(prompt)} prompt tokens`;
  }
  const reused = cached > 0
    ? `reused ${fmtCount(cached)} of ${fmtCount(prompt)} prompt tokens (${String(pc.source ?? "?")})`
    : `reused none of ${fmtCount(prompt)} prompt tokens`;
  const why = PREFIX_STOPS.get(stop);
  return `${reused}; stopped: ${stop} at token ${fmtCount(cached)}` + (why ? ` — ${why}` : "");
}

const CONSTRAINT_KINDS = new Map([
  ["json_object", "a JSON object (response_format json_object)"],
  ["json_schema", "a JSON Schema (response_format json_schema)"],
  ["tool_required", "a tool call (tool_choice required)"],
  ["tool_named", "a call of the named tool (tool_choice)"],
  ["tool_auto", "each tool call the model opened (tool_choice auto)"],
]);

// constraintText says in words what grammar a request's output was held
// to and what it cost (a record's constraint object): "a JSON Schema
// (response_format json_schema); compiled in 12.3 ms; masks 4.1 ms inside
// sampling". null without one.
export function constraintText(c) {
  if (!c || typeof c !== "object") return null;
  const parts = [CONSTRAINT_KINDS.get(String(c.kind)) ?? String(c.kind)];
  parts.push(c.cache_hit ? `grammar from the cache (${fmtMs(c.compile_ms)})` : `compiled in ${fmtMs(c.compile_ms)}`);
  parts.push(`masks ${fmtMs(c.mask_ms)} inside sampling`);
  if (c.forced_close) parts.push("the token budget forced the document closed");
  if (c.truncated) parts.push("the output ended incomplete: even its shortest completion did not fit");
  return parts.join("; ");
}

export const $ = (id) => document.getElementById(id);

// h builds an element. attrs are set as attributes (or dataset entries for
// a "data" object); children are nodes or strings (inserted as text).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "data") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// ---- formatting ----

export const isNum = (v) => typeof v === "number" && Number.isFinite(v);
export const fixed = (v, digits) =>
  v.toLocaleString(undefined, { minimumFractionDigits: digits, maximumFractionDigits: digits });

// fmtMs keeps the contract's distinction: null (not observed) is a dash,
// zero is "0 ms" (measured as zero), positive values are wall time.
export function fmtMs(v) {
  if (v === null || v === undefined) return "—";
  if (!isNum(v)) return "?";
  if (v === 0) return "0 ms";
  const a = Math.abs(v);
  return fixed(v, a < 1 ? 3 : a < 100 ? 2 : 1) + " ms";
}

export function fmtCount(v) {
  if (v === null || v === undefined) return "—";
  return isNum(v) ? v.toLocaleString() : "?";
}

export function fmtRate(v) {
  if (!isNum(v)) return "—";
  return fixed(v, v < 10 ? 2 : 1);
}

export function fmtTime(iso) {
  const d = new Date(iso);
  if (typeof iso !== "string" || Number.isNaN(d.getTime())) return ["?", ""];
  return [d.toLocaleTimeString(), d.toISOString()];
}

// timeCell is a table cell with one readable local time (the date too when
// it is not today) and the ISO instant as its tooltip, never both printed.
export function timeCell(iso) {
  const d = new Date(iso);
  if (typeof iso !== "string" || Number.isNaN(d.getTime())) return h("td", null, "—");
  const today = d.toDateString() === new Date().toDateString();
  const text = today ? d.toLocaleTimeString() : d.toLocaleString();
  return h("td", { title: d.toISOString() }, h("time", { datetime: d.toISOString() }, text));
}

// roundForPeople rounds a decimal as fmtMs does (3 places below 1, 2 below
// 100, 1 above) without trailing zeros: 0.09572399999999999 reads 0.096.
export function roundForPeople(v) {
  if (!isNum(v)) return "?";
  const a = Math.abs(v);
  return String(Number(v.toFixed(a < 1 ? 3 : a < 100 ? 2 : 1)));
}

// tidyText rounds the long decimals inside server text (a summary, an
// error) for reading: "p99 0.10284748999999999 ms" reads "p99 0.103 ms".
// Only decimals with more than four places change; the JSON stays as sent.
export function tidyText(s) {
  if (typeof s !== "string") return "";
  return s.replace(/-?\d+\.\d{5,}(?:e[-+]?\d+)?/gi, (m) => roundForPeople(Number(m)));
}

export const plural = (n, one, many) => (n === 1 ? one : many);
