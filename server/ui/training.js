// Training panel: polls GET /v1/train/queue every REFRESH_MS while the tab
// is visible and renders the training queue (running, queued, finished
// jobs) and the loss curve of the running job (else of the latest finished
// one), drawn on a canvas by this module: no chart library.
//
// Server data is only ever inserted as text. The access token is the one
// the dashboard keeps in sessionStorage.

import { $, h, fixed, fmtTime } from "./format.js";

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

function jobRow(j) {
  const last = j.losses.length ? fixed(j.losses[j.losses.length - 1], 4) : "—";
  let outcome = j.adapter || "";
  if (j.error) outcome = j.error;
  return h("tr", { class: "job-" + j.state },
    h("td", { title: j.job_id }, j.job_id.replace(/^train-/, "").slice(0, 8)),
    h("td", null, j.position ? `${j.state} #${j.position}` : j.state),
    h("td", { class: "num" }, `${j.step}/${j.total_steps}`),
    h("td", { class: "num" }, last),
    h("td", null, j.output_name),
    h("td", null, outcome),
    h("td", null, fmtTime(j.finished_at || j.started_at || j.created_at)));
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
  const losses = j.losses;
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
  const jobs = [];
  if (q.running) jobs.push(q.running);
  jobs.push(...q.queued);
  jobs.push(...q.completed.slice().reverse());
  $("training-empty").hidden = jobs.length > 0;
  $("training-table").hidden = jobs.length === 0;
  $("training-rows").replaceChildren(...jobs.map(jobRow));
  const shown = q.running || q.completed[q.completed.length - 1];
  $("training-curve").hidden = !shown;
  if (shown) {
    $("training-curve-title").textContent =
      `Loss per step — ${shown.job_id} (${shown.state}, ${shown.losses.length}/${shown.total_steps} steps)`;
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
