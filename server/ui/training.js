// Training panel: polls GET /v1/train/queue every REFRESH_MS while the tab
// is visible and renders the training queue (running, queued, finished
// jobs) and the loss curve of the running job (else of the latest finished
// one), drawn on a canvas by this module: no chart library. A running job
// also shows its slice (slice_ms), the current step's progress
// (step_progress) and the streams its slices pause (paused_streams); a
// swapping one (trained, waiting to swap its adapter in) the active
// requests the swap waits for (waiting_requests). Each of those fields is
// shown when the server sends it.
//
// Server data is only ever inserted as text. The access token is the one
// the dashboard keeps in sessionStorage.

import { $, h, isNum, fixed, fmtCount, plural, roundForPeople, timeCell, tidyText } from "./format.js";

const REFRESH_MS = 2000;
const TOKEN_KEY = "kiln.accessToken";
const QUEUE_PATH = "v1/train/queue";
const api = (path) => new URL("../" + path, import.meta.url);

let timer = 0;

async function fetchQueue() {
  const headers = { Accept: "application/json" };
  const tok = sessionStorage.getItem(TOKEN_KEY);
  if (tok) headers.Authorization = "Bearer " + tok;
  const res = await fetch(api(QUEUE_PATH), { headers, cache: "no-store", credentials: "omit" });
  if (!res.ok) throw new Error(`/${QUEUE_PATH}: HTTP ${res.status}`);
  return res.json();
}

const STATE_LABEL = { swapping: "swapping adapter in" };

function jobRow(j) {
  const losses = Array.isArray(j.losses) ? j.losses.filter(isNum) : [];
  const last = losses.length ? fixed(losses[losses.length - 1], 4) : "—";
  let outcome = j.adapter || "";
  if (j.error) outcome = tidyText(j.error);
  const state = String(j.state || "?");
  const id = String(j.job_id || "?");
  return h("tr", { class: "job-" + state.replace(/[^a-z_]/g, ""), data: { jobId: id, state } },
    h("td", { title: id }, id.replace(/^train-/, "").slice(0, 8)),
    h("td", null, j.position ? `${state} #${j.position}` : STATE_LABEL[state] || state),
    h("td", { class: "num" }, `${fmtCount(j.step)}/${fmtCount(j.total_steps)}`),
    h("td", { class: "num" }, last),
    h("td", null, j.output_name || ""),
    h("td", null, outcome),
    timeCell(j.finished_at || j.started_at || j.created_at));
}

// liveFacts says what a running or swapping job is doing now, from the
// fields the server sends (each optional).
function liveFacts(j) {
  const facts = [];
  if (j.state === "swapping") {
    facts.push(h("span", { class: "fact", data: { fact: "swapping" } }, "trained; waiting to swap its adapter in"));
    if (isNum(j.waiting_requests)) {
      facts.push(h("span", { class: "fact", data: { fact: "waiting_requests" } }, j.waiting_requests > 0
        ? `the swap waits for ${fmtCount(j.waiting_requests)} active ${plural(j.waiting_requests, "request", "requests")} to finish`
        : "no active request to wait for"));
    }
    return facts;
  }
  if (isNum(j.slice_ms)) {
    facts.push(h("span", { class: "fact", data: { fact: "slice" }, title: "--maintenance-slice: the longest exclusive hold of the device" },
      `slices of at most ${roundForPeople(j.slice_ms)} ms`));
  }
  const p = j.step_progress;
  if (p && typeof p === "object" && isNum(p.done) && isNum(p.total) && p.total > 0) {
    const pct = Math.min(100, Math.round((100 * p.done) / p.total));
    facts.push(h("span", { class: "fact", data: { fact: "step_progress" } },
      `current step ${pct}% (${fmtCount(p.done)} of ${fmtCount(p.total)})`,
      h("progress", { max: String(p.total), value: String(Math.min(p.done, p.total)), "aria-label": "current step's progress" })));
  }
  if (isNum(j.paused_streams)) {
    facts.push(h("span", { class: "fact", data: { fact: "paused_streams" }, title: "streams decoding while its slices hold the device" },
      j.paused_streams > 0 ? `pausing ${fmtCount(j.paused_streams)} ${plural(j.paused_streams, "stream", "streams")}` : "pausing no stream"));
  }
  return facts;
}

// liveRow is the line under a running or swapping job's row (none when
// the server sends none of its fields).
function liveRow(j) {
  if (j.state !== "running" && j.state !== "swapping") return null;
  const facts = liveFacts(j);
  if (!facts.length) return null;
  return h("tr", { class: "job-live", id: "training-live", data: { jobId: String(j.job_id || "") } },
    h("td", { colspan: "7" }, facts));
}

// drawLoss draws the losses of job j (one point per optimizer step, the x
// axis spanning all its steps) on the canvas.
function drawLoss(canvas, j) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width, hgt = canvas.height, pad = 36;
  ctx.clearRect(0, 0, w, hgt);
  const css = getComputedStyle(canvas);
  ctx.strokeStyle = css.color;
  ctx.fillStyle = css.color;
  ctx.font = "11px sans-serif";
  ctx.beginPath();
  ctx.moveTo(pad, 8);
  ctx.lineTo(pad, hgt - pad);
  ctx.lineTo(w - 8, hgt - pad);
  ctx.stroke();
  const losses = Array.isArray(j.losses) ? j.losses.filter(isNum) : [];
  if (!losses.length) {
    ctx.fillText("waiting for the first step…", pad + 8, hgt / 2);
    return;
  }
  const top = Math.max(...losses) * 1.05 || 1;
  const steps = Math.max(j.total_steps, losses.length, 2);
  const x = (i) => pad + ((w - pad - 8) * i) / (steps - 1);
  const y = (v) => hgt - pad - ((hgt - pad - 8) * v) / top;
  ctx.fillText(fixed(top, 2), 2, 14);
  ctx.fillText("0", pad - 12, hgt - pad);
  ctx.fillText("step 1", pad, hgt - pad + 14);
  ctx.fillText(`step ${steps}`, w - 48, hgt - pad + 14);
  ctx.strokeStyle = "#2f6fdf";
  ctx.lineWidth = 2;
  ctx.beginPath();
  losses.forEach((v, i) => (i ? ctx.lineTo(x(i), y(v)) : ctx.moveTo(x(i), y(v))));
  ctx.stroke();
  ctx.lineWidth = 1;
}

function render(q) {
  const list = (v) => (Array.isArray(v) ? v.filter((j) => j && typeof j === "object") : []);
  const queued = list(q && q.queued), completed = list(q && q.completed);
  const running = q && q.running && typeof q.running === "object" ? q.running : null;
  const jobs = [];
  if (running) jobs.push(running);
  jobs.push(...queued);
  jobs.push(...completed.slice().reverse());
  $("training-empty").hidden = jobs.length > 0;
  $("training-table").hidden = jobs.length === 0;
  $("training-rows").replaceChildren(...jobs.flatMap((j) => [jobRow(j), liveRow(j)].filter(Boolean)));
  const shown = running || completed[completed.length - 1];
  $("training-curve").hidden = !shown;
  if (shown) {
    const n = Array.isArray(shown.losses) ? shown.losses.length : 0;
    $("training-curve-title").textContent =
      `Loss per step — ${shown.job_id} (${STATE_LABEL[shown.state] || shown.state}, ${n}/${shown.total_steps} steps)`;
    drawLoss($("training-canvas"), shown);
  }
}

async function refresh() {
  clearTimeout(timer);
  try {
    render(await fetchQueue());
    $("training-error").hidden = true;
  } catch (err) {
    $("training-error").textContent = err instanceof Error ? err.message : String(err);
    $("training-error").hidden = false;
  }
  if (!document.hidden) timer = setTimeout(refresh, REFRESH_MS);
}

document.addEventListener("visibilitychange", () => {
  if (!document.hidden) refresh();
});
refresh();
