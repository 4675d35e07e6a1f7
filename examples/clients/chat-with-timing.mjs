// The canonical streaming loop of the openai npm package, made safe for
// Kiln's per-token timing events: prints the completion as it streams, then
// one table row per token and the terminal latency summary.
//
//   cd examples/clients && npm ci
//   node chat-with-timing.mjs "Explain the pause." [--base-url http://127.0.0.1:8420/v1] [--model kiln-tiny] [--max-tokens 32]
//
// KILN_ACCESS_TOKEN, when set, is sent as the API key. The end-to-end test
// cmd/kiln/e2e_openai_test.go runs this file against the built binary.
import OpenAI from "openai";
import { isTokenTiming, formatTimingTable, formatSummary } from "./kiln-timing.mjs";

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : def;
};
const baseURL = opt("--base-url", process.env.KILN_BASE_URL ?? "http://127.0.0.1:8420/v1");
const model = opt("--model", "kiln-tiny");
const maxTokens = Number(opt("--max-tokens", "32"));
const prompt = args.join(" ") || "Explain the pause.";

const client = new OpenAI({ baseURL, apiKey: process.env.KILN_ACCESS_TOKEN ?? "unused" });
const stream = await client.chat.completions.create({
  model,
  messages: [{ role: "user", content: prompt }],
  max_tokens: maxTokens,
  temperature: 0,
  stream: true,
  include_performance: true, // a Kiln extension: the SDK forwards it unchanged
});

const timings = [];
let latency = null;
for await (const item of stream) {
  // A kiln.token_timing event has no `choices`: branch on `object` first.
  if (isTokenTiming(item)) {
    timings.push(item);
    continue;
  }
  process.stdout.write(item.choices[0]?.delta?.content ?? "");
  if (item.choices[0]?.finish_reason) latency = item.metadata?.performance?.latency ?? null;
}
process.stdout.write("\n\n");
console.log(formatTimingTable(timings));
const summary = formatSummary(latency);
if (summary) console.log(`\n${summary}`);
