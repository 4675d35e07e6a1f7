// Streams one chat completion from kiln serve through the official openai
// npm package (unmodified) and prints a per-token timing table from Kiln's
// kiln.token_timing events, then the terminal latency summary.
//
//   cd examples/clients && npm ci
//   node stream-timing.mjs "Explain the pause." [--url http://127.0.0.1:8420] [--model kiln-tiny]
//        [--token TOKEN] [--max-tokens 32] [--json]
//
// --url is the server (with or without /v1; --base-url is the same);
// --token defaults to KILN_ACCESS_TOKEN. A refused connection or a 401
// prints one line saying what to do instead of a stack trace.
//
// include_performance is a Kiln extension: passed as an extra body field, the
// SDK forwards it unchanged. The SDK hands the timing events to us as extra
// stream items (their object is "kiln.token_timing", not a chat chunk).
// With --json, prints one JSON object (chunks, events, summary) instead: the
// end-to-end tests read that.
import OpenAI from "openai";

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : def;
};
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? (args.splice(i, 1), true) : false;
};
const url = opt("--url", opt("--base-url", process.env.KILN_BASE_URL || "http://127.0.0.1:8420"));
const baseURL = url.replace(/\/+$/, "").replace(/(\/v1)?$/, "/v1");
const token = opt("--token", process.env.KILN_ACCESS_TOKEN || "unused");
const maxTokens = Number(opt("--max-tokens", "32"));
const model = opt("--model", "kiln-tiny");
const optIn = !flag("--no-timing");
const json = flag("--json");
const nonStream = flag("--non-stream");
const prompt = args.join(" ") || "Explain the pause.";

const client = new OpenAI({ baseURL, apiKey: token, maxRetries: 0 });

// fail prints the cause of a failed request on one line and exits 1.
function fail(err) {
  const code = err?.cause?.code ?? err?.cause?.cause?.code;
  if (err instanceof OpenAI.APIConnectionError) {
    const why = code === "ECONNREFUSED" ? "connection refused" : (code ?? err.message);
    console.error(`stream-timing: cannot reach ${baseURL}: ${why} (is kiln serve running there? see --url)`);
  } else if (err instanceof OpenAI.AuthenticationError) {
    console.error(`stream-timing: 401 from ${baseURL}: the server wants its access token (--token or KILN_ACCESS_TOKEN)`);
  } else if (err instanceof OpenAI.APIError) {
    console.error(`stream-timing: HTTP ${err.status} from ${baseURL}: ${err.error?.message ?? err.message}`);
  } else {
    console.error(`stream-timing: ${err?.message ?? err}`);
  }
  process.exit(1);
}
const body = {
  model,
  messages: [{ role: "user", content: prompt }],
  max_tokens: maxTokens,
  temperature: 0,
  ...(optIn ? { include_performance: true } : {}),
};

try {
  if (nonStream) {
    const resp = await client.chat.completions.create({ ...body, stream: false });
    if (json) {
      console.log(JSON.stringify({ response: resp }));
    } else {
      console.log(resp.choices[0].message.content);
      console.log(JSON.stringify(resp.metadata?.performance?.latency ?? null, null, 2));
    }
    process.exit(0);
  }

  const stream = await client.chat.completions.create({ ...body, stream: true });
  const chunks = [];
  const events = [];
  const order = [];
  let summary = null;
  for await (const item of stream) {
    if (item.object === "kiln.token_timing") {
      events.push(item);
      order.push("timing");
      continue;
    }
    chunks.push(item);
    const choice = item.choices?.[0];
    if (choice?.delta?.content !== undefined && choice?.delta?.content !== null && choice?.delta?.content !== "") order.push("content");
    if (choice?.finish_reason) {
      order.push("finish");
      summary = item.metadata?.performance?.latency ?? null;
    }
  }

  if (json) {
    console.log(JSON.stringify({ chunks, events, order, summary }));
    process.exit(0);
  }

  const pad = (v, n) => String(v ?? "null").padStart(n);
  console.log(["idx", "token", "ready_ms", "enqueued_ms", "queue_ms", "blocking_phase", "blocking_ms"].map((h, i) => pad(h, [4, 6, 10, 12, 9, 18, 12][i])).join(" "));
  for (const e of events) {
    console.log([
      pad(e.token_index, 4), pad(e.token_id, 6), pad(e.ready_ms.toFixed(2), 10),
      pad(e.body_enqueued_ms.toFixed(2), 12), pad(e.queue_delay_ms.toFixed(2), 9),
      pad(e.blocking_phase, 18), pad(e.blocking_phase_ms?.toFixed(2), 12),
    ].join(" "));
  }
  if (summary) {
    console.log(`\nTTFT ${summary.ttft_ms?.toFixed(2)} ms, ITL p50 ${summary.itl_ms_p50?.toFixed(2)} ms, p99 ${summary.itl_ms_p99?.toFixed(2)} ms, stalls ${summary.stall_count}`);
  }
} catch (err) {
  fail(err);
}
