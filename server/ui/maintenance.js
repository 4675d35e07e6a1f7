// The maintenance panel: the latest maintenance operations (trims, KV
// resizes, adapter swaps, training steps) from GET /v1/maintenance/recent,
// newest first, with kind, reason, start, duration, outcome and summary.
// Server data is only ever inserted as text.

import { $, h, isNum, fmtMs, fmtTime } from "./format.js";

const KIND_LABEL = new Map([
  ["trim", "Trim"],
  ["resize", "KV resize"],
  ["adapter_swap", "Adapter swap"],
  ["training_step", "Training step"],
]);

let lastKey = "";

// renderMaintenance shows one Promise.allSettled result of the maintenance
// fetch. A failure stays inside the panel (a server without the route is
// not a refresh failure of the dashboard).
export function renderMaintenance(result) {
  const empty = $("maintenance-empty");
  const table = $("maintenance-table");
  if (result.status !== "fulfilled") {
    const msg = result.reason instanceof Error ? result.reason.message : String(result.reason);
    lastKey = "";
    empty.textContent = "Maintenance operations are not available: " + msg;
    empty.hidden = false;
    table.hidden = true;
    return;
  }
  const v = result.value;
  const ops = v && Array.isArray(v.operations) ? v.operations.filter((o) => o && typeof o === "object") : [];
  const key = JSON.stringify(ops);
  if (key === lastKey) return;
  lastKey = key;
  empty.textContent = "No maintenance operations yet (trims, KV resizes, adapter swaps, training steps).";
  empty.hidden = ops.length > 0;
  table.hidden = ops.length === 0;
  $("maintenance-rows").replaceChildren(...ops.map(maintenanceRow));
}

function maintenanceRow(o) {
  const kind = typeof o.kind === "string" ? o.kind : "?";
  const [time, iso] = fmtTime(o.start);
  const running = o.running === true;
  const outcome = running ? "running" : typeof o.outcome === "string" && o.outcome ? o.outcome : "?";
  return h("tr", { data: { kind, outcome } },
    h("td", null, h("span", { class: "badge", title: kind }, KIND_LABEL.get(kind) || kind)),
    h("td", null, h("code", null, typeof o.reason === "string" ? o.reason : "?")),
    h("td", { title: iso }, time),
    h("td", { class: "num" }, running || !isNum(o.duration_ms) ? "—" : fmtMs(o.duration_ms)),
    h("td", null, h("span", { class: "badge outcome-" + outcome.replace(/[^a-z_]/g, "") }, outcome)),
    h("td", { class: "summary" }, typeof o.summary === "string" ? o.summary : ""));
}
