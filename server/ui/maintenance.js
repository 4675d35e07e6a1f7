// The maintenance panel: the latest maintenance operations (trims, KV
// resizes, adapter swaps, training jobs) from GET /v1/maintenance/recent,
// newest first, with kind, reason, start, duration, the device time it held
// exclusively, outcome and summary. A training job is one row for all its
// steps: the steps ended, their total hold and the latest step's summary.
// Each row's element id is maintenance-op-<id> (the engine's operation
// identity), which a diagnosis blocker's panel_id names; highlightOperation
// marks it. Server data is only ever inserted as text.

import { $, h, isNum, fmtMs, fmtCount, plural, timeCell, tidyText } from "./format.js";

const KIND_LABEL = new Map([
  ["trim", "Trim"],
  ["resize", "KV resize"],
  ["adapter_swap", "Adapter swap"],
  ["training_job", "Training job"],
  ["training_step", "Training step"],
]);

let lastKey = "";
let loaded = false; // a list has been rendered
// The operation a diagnosis link named (0: none), and whether its row
// should be scrolled to once it is listed.
let highlighted = 0;
let scrollPending = false;

export const operationRowId = (id) => "maintenance-op-" + id;

// renderMaintenance shows one Promise.allSettled result of the maintenance
// fetch. A failure stays inside the panel (a server without the route is
// not a refresh failure of the dashboard).
export function renderMaintenance(result) {
  const empty = $("maintenance-empty");
  const table = $("maintenance-table");
  if (result.status !== "fulfilled") {
    const msg = result.reason instanceof Error ? result.reason.message : String(result.reason);
    lastKey = "";
    loaded = false;
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
  loaded = true;
  empty.textContent = "No maintenance operations yet (trims, KV resizes, adapter swaps, training jobs).";
  empty.hidden = ops.length > 0;
  table.hidden = ops.length === 0;
  $("maintenance-rows").replaceChildren(...ops.map(maintenanceRow));
  applyHighlight();
}

// highlightOperation marks the row of operation id (a diagnosis blocker's
// panel_id) and scrolls it into view, now or once the panel lists it; 0
// clears the mark.
export function highlightOperation(id) {
  highlighted = isNum(id) && id > 0 ? id : 0;
  scrollPending = highlighted > 0;
  applyHighlight();
}

function applyHighlight() {
  const note = $("maintenance-note");
  let found = null;
  for (const tr of $("maintenance-rows").children) {
    const on = highlighted > 0 && tr.id === operationRowId(highlighted);
    tr.classList.toggle("highlight", on);
    if (on) {
      tr.setAttribute("aria-current", "true");
      found = tr;
    } else {
      tr.removeAttribute("aria-current");
    }
  }
  if (highlighted > 0 && !found && loaded) {
    note.textContent = `Operation ${highlighted} is no longer among the operations listed here (the 20 newest).`;
    note.hidden = false;
  } else {
    note.hidden = true;
  }
  if (found && scrollPending) {
    scrollPending = false;
    found.scrollIntoView({ block: "center", behavior: "smooth" });
    found.focus({ preventScroll: true });
  }
}

function maintenanceRow(o) {
  const kind = typeof o.kind === "string" ? o.kind : "?";
  const running = o.running === true;
  const outcome = running ? "running" : typeof o.outcome === "string" && o.outcome ? o.outcome : "?";
  const id = isNum(o.id) ? o.id : null;
  const summary = tidyText(o.summary);
  let summaryCell;
  if (kind === "training_job") {
    const steps = isNum(o.steps) ? o.steps : 0;
    summaryCell = h("td", { class: "summary" },
      h("strong", { class: "steps" }, `${fmtCount(steps)} ${plural(steps, "step", "steps")} ${running ? "done so far" : "done"}`),
      // While it runs the summary is its latest step's; once it ended, the
      // job's own.
      summary ? [/^training step /.test(summary) ? " · latest: " : " · ", summary] : null);
  } else {
    summaryCell = h("td", { class: "summary" }, summary);
  }
  return h("tr", {
    id: id !== null ? operationRowId(id) : null, tabindex: id !== null ? "-1" : null,
    class: running ? "running" : null,
    data: { kind, outcome, running: String(running), operationId: id !== null ? String(id) : "" },
  },
  h("td", null, running ? h("span", { class: "live", title: "running", "aria-hidden": "true" }) : null,
    h("span", { class: "badge", title: kind }, KIND_LABEL.get(kind) || kind)),
  h("td", null, h("code", null, typeof o.reason === "string" ? o.reason : "?")),
  timeCell(o.start),
  h("td", { class: "num" }, running || !isNum(o.duration_ms) ? "—" : fmtMs(o.duration_ms)),
  h("td", { class: "num", title: "exclusive hold of the device (a job's: all its steps')" }, isNum(o.hold_ms) ? fmtMs(o.hold_ms) : "—"),
  h("td", null, h("span", { class: "badge outcome-" + outcome.replace(/[^a-z_]/g, "") }, outcome)),
  summaryCell);
}
