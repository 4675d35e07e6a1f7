// Helpers for reading Kiln's per-token timing from a stream produced by the
// official openai npm package.
//
// With include_performance: true, Kiln interleaves two kinds of objects on
// one chat stream: ordinary chat.completion.chunk objects (they have
// `choices`) and, after each token's chunk, a kiln.token_timing event (it
// has no `choices`: its fields are the token's timing). The SDK yields both
// unchanged, so a loop that reads `c.choices[0].delta.content` on every
// item throws on the first timing event. Branch on `object` instead:
//
//   for await (const item of stream) {
//     if (isTokenTiming(item)) { timings.push(item); continue; }
//     process.stdout.write(item.choices[0]?.delta?.content ?? "");
//   }
//
// or let splitStream do the branching. Nothing here depends on the SDK:
// the helpers work on any async iterable of parsed stream objects.

/** The `object` of Kiln's per-token timing event. */
export const TOKEN_TIMING = "kiln.token_timing";

/** True when a stream item is a kiln.token_timing event, not a chat chunk. */
export function isTokenTiming(item) {
  return item !== null && typeof item === "object" && item.object === TOKEN_TIMING;
}

/**
 * Splits a chat stream into what a caller wants, in stream order:
 *   { kind: "content", text, chunk }            a chunk with non-empty delta.content
 *   { kind: "timing", event }                   a kiln.token_timing event
 *   { kind: "finish", reason, latency, chunk }  the chunk with finish_reason;
 *       latency is metadata.performance.latency, or null when the request
 *       did not opt in
 * Chunks with neither content nor a finish reason (the role chunk) are
 * skipped.
 */
export async function* splitStream(stream) {
  for await (const item of stream) {
    if (isTokenTiming(item)) {
      yield { kind: "timing", event: item };
      continue;
    }
    const choice = item?.choices?.[0];
    const text = choice?.delta?.content;
    if (typeof text === "string" && text !== "") yield { kind: "content", text, chunk: item };
    if (choice?.finish_reason) {
      yield { kind: "finish", reason: choice.finish_reason, latency: item.metadata?.performance?.latency ?? null, chunk: item };
    }
  }
}

/**
 * Reads a whole stream: returns { content, events, finishReason, latency }.
 * onContent(text) is called for each piece of content as it arrives.
 */
export async function collectStream(stream, onContent = () => {}) {
  const out = { content: "", events: [], finishReason: null, latency: null };
  for await (const part of splitStream(stream)) {
    switch (part.kind) {
      case "content":
        out.content += part.text;
        onContent(part.text);
        break;
      case "timing":
        out.events.push(part.event);
        break;
      case "finish":
        out.finishReason = part.reason;
        out.latency = part.latency;
        break;
    }
  }
  return out;
}

const columns = [
  ["idx", 4, (e) => e.token_index],
  ["token", 6, (e) => e.token_id],
  ["ready_ms", 10, (e) => ms(e.ready_ms)],
  ["enqueued_ms", 12, (e) => ms(e.body_enqueued_ms)],
  ["queue_ms", 9, (e) => ms(e.queue_delay_ms)],
  ["blocking_phase", 18, (e) => e.blocking_phase],
  ["blocking_ms", 12, (e) => ms(e.blocking_phase_ms)],
];

function ms(v) {
  return typeof v === "number" ? v.toFixed(2) : v;
}

/** Formats timing events as a fixed-width table, one line per token. */
export function formatTimingTable(events) {
  const cell = (v, w) => String(v ?? "null").padStart(w);
  const lines = [columns.map(([h, w]) => cell(h, w)).join(" ")];
  for (const e of events) lines.push(columns.map(([, w, f]) => cell(f(e), w)).join(" "));
  return lines.join("\n");
}

/** Formats the terminal latency summary as one line ("" when null). */
export function formatSummary(latency) {
  if (!latency) return "";
  const f = (v) => (typeof v === "number" ? `${v.toFixed(2)} ms` : "n/a");
  return `TTFT ${f(latency.ttft_ms)}, ITL p50 ${f(latency.itl_ms_p50)}, p99 ${f(latency.itl_ms_p99)}, stalls ${latency.stall_count}`;
}
