// Anthropic's Messages API (POST /v1/messages) through the official
// @anthropic-ai/sdk npm package, unmodified: messages.create and
// messages.stream, plain and with a tool (tool_choice any and tool), a
// tool_use / tool_result round trip, stop_sequences, countTokens, and a
// bad request's error shape.
//
//   cd examples/clients && npm ci
//   node agents/anthropic.mjs [--url http://127.0.0.1:8420] [--model kiln-tiny] [--token TOKEN]
//        [--max-tokens 160] [--case NAME]
//
// Prints one JSON line, as the other agent scripts do (common.mjs);
// cmd/kiln/e2e_agents_test.go runs it against the built binary.
import { parseFlags, importOrExit, Runner, check, fits, WeatherArgs, weatherTool, weatherParameters, weatherPrompt, clipText } from "./common.mjs";

const flags = parseFlags();
const { default: Anthropic } = await importOrExit("@anthropic-ai/sdk");

// The SDK appends /v1/messages to its base URL; it sends the key as
// x-api-key.
const client = new Anthropic({ baseURL: flags.baseURL.replace(/\/v1$/, ""), apiKey: flags.token, maxRetries: 0 });
const base = { model: flags.model, temperature: 0 };
const hello = [{ role: "user", content: "Say hello." }];
const tools = [{ name: weatherTool.name, description: weatherTool.description, input_schema: weatherParameters }];

const r = new Runner("anthropic", flags);

function textOf(msg) {
  return msg.content.filter((b) => b.type === "text").map((b) => b.text).join("");
}

// weatherUses checks a message's tool_use blocks: at least one, each to
// get_weather with an id and an input that fits.
function weatherUses(msg) {
  const uses = msg.content.filter((b) => b.type === "tool_use");
  check(uses.length > 0, "no tool_use block came back, though tool_choice requires one", { stop_reason: msg.stop_reason, content: msg.content });
  check(msg.stop_reason === "tool_use", `stop_reason ${msg.stop_reason}, want tool_use`);
  return uses.map((u, i) => {
    check(u.name === weatherTool.name, `tool_use ${i} calls ${u.name}`);
    check(typeof u.id === "string" && u.id.length > 0, `tool_use ${i} has no id`);
    return { tool: u.name, id: u.id, args: fits(WeatherArgs, u.input, `the input of tool_use ${i}`) };
  });
}

await r.run("create/plain", "messages", async () => {
  const msg = await client.messages.create({ ...base, system: "Be brief.", messages: hello, max_tokens: 8 });
  check(msg.type === "message" && msg.role === "assistant" && msg.id.startsWith("msg_"), "not a message object", { id: msg.id });
  check(msg.stop_reason === "max_tokens" && msg.usage.output_tokens === 8, `stop_reason ${msg.stop_reason} after ${msg.usage.output_tokens} tokens, want max_tokens after 8`);
  check(textOf(msg).length > 0, "no text block");
  return { text: clipText(textOf(msg)), stop_reason: msg.stop_reason, usage: msg.usage };
});

await r.run("stream/plain", "messages", async () => {
  const stream = client.messages.stream({ ...base, messages: [{ role: "user", content: [{ type: "text", text: "Say hello." }] }], max_tokens: 8 });
  let text = "";
  let deltas = 0;
  stream.on("text", (t) => {
    text += t;
    deltas++;
  });
  const msg = await stream.finalMessage();
  check(deltas > 1 && text === textOf(msg), `${deltas} text deltas do not spell the final text`, { deltas: clipText(text), final: clipText(textOf(msg)) });
  check(msg.stop_reason === "max_tokens" && msg.usage.output_tokens === 8, `stop_reason ${msg.stop_reason}, output_tokens ${msg.usage.output_tokens}`);
  return { text: clipText(text), deltas, stop_reason: msg.stop_reason, usage: msg.usage };
});

await r.run("create/stop_sequences", "messages", async () => {
  // The first answer's third word is a stop sequence of the second: the
  // same greedy output then stops before it.
  const first = await client.messages.create({ ...base, messages: hello, max_tokens: 6 });
  const words = textOf(first).trim().split(/\s+/);
  check(words.length >= 3, "too few words to pick a stop sequence", { text: textOf(first) });
  const stop = ` ${words[2]}`;
  const msg = await client.messages.create({ ...base, messages: hello, max_tokens: 6, stop_sequences: [stop] });
  check(msg.stop_reason === "stop_sequence" && msg.stop_sequence === stop, `stop_reason ${msg.stop_reason} (${msg.stop_sequence}), want stop_sequence ${JSON.stringify(stop)}`);
  check(!textOf(msg).includes(stop), "the stop sequence is in the text");
  return { text: clipText(textOf(msg)), stop_reason: msg.stop_reason, stop_sequence: msg.stop_sequence };
});

await r.run("create/tool-any", "tool_choice", async () => {
  const msg = await client.messages.create({ ...base, messages: [{ role: "user", content: weatherPrompt }], tools, tool_choice: { type: "any" }, max_tokens: flags.maxTokens });
  return { calls: weatherUses(msg), stop_reason: msg.stop_reason };
});

await r.run("stream/tool-named", "tool_choice", async () => {
  const stream = client.messages.stream({
    ...base,
    messages: [{ role: "user", content: weatherPrompt }],
    tools,
    tool_choice: { type: "tool", name: weatherTool.name, disable_parallel_tool_use: true },
    max_tokens: flags.maxTokens,
  });
  let json = "";
  stream.on("inputJson", (partial) => {
    json += partial;
  });
  const msg = await stream.finalMessage();
  const calls = weatherUses(msg);
  check(calls.length === 1, `${calls.length} calls with disable_parallel_tool_use`);
  check(JSON.stringify(JSON.parse(json)) === JSON.stringify(calls[0].args), "the input_json deltas do not spell the input", { deltas: json });
  return { calls, stop_reason: msg.stop_reason };
});

await r.run("tool-result-round-trip", "tool_result", async () => {
  const question = { role: "user", content: weatherPrompt };
  const first = await client.messages.create({ ...base, messages: [question], tools, tool_choice: { type: "any" }, max_tokens: flags.maxTokens });
  const calls = weatherUses(first);
  const results = { role: "user", content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: JSON.stringify({ temperature: 21, sky: "sunny" }) })) };
  const second = await client.messages.create({ ...base, messages: [question, { role: "assistant", content: first.content }, results], tools, tool_choice: { type: "none" }, max_tokens: 12 });
  check(textOf(second).length > 0 && second.content.every((b) => b.type === "text"), "the answer after the tool result is not text", { content: second.content });
  const prompt = second.usage.input_tokens + second.usage.cache_read_input_tokens;
  return { calls, tool_messages: results.content.length, text: clipText(textOf(second)), prompt_tokens: prompt, cache_read_input_tokens: second.usage.cache_read_input_tokens };
});

await r.run("countTokens", "messages", async () => {
  const n = await client.messages.countTokens({ model: flags.model, messages: hello, tools });
  const msg = await client.messages.create({ ...base, messages: hello, tools, max_tokens: 1 });
  const prompt = msg.usage.input_tokens + msg.usage.cache_read_input_tokens;
  check(n.input_tokens === prompt, `countTokens says ${n.input_tokens}, the message's usage ${prompt}`);
  return { input_tokens: n.input_tokens };
});

await r.run("error/shape", "messages", async () => {
  let err;
  try {
    await client.messages.create({ ...base, messages: hello }); // no max_tokens
  } catch (e) {
    err = e;
  }
  check(err, "a request without max_tokens was accepted");
  check(err.status === 400, `status ${err.status}, want 400`);
  check(err.error?.type === "error" && err.error?.error?.type === "invalid_request_error", "not Anthropic's error shape", { body: err.error });
  check(/max_tokens/.test(err.error.error.message), "the message does not name max_tokens", { body: err.error });
  return { status: err.status, type: err.error.error.type, server_message: err.error.error.message };
});

r.finish();
