// The official openai npm package, unmodified, exercising the chat
// completion fields agents and evaluation harnesses use: logprobs with
// top_logprobs, n, tools with tool_choice required (streamed and not), a
// tool-result round trip, response_format json_schema, and the SDK's
// parse helpers (zodResponseFormat, zodFunction).
//
//   cd examples/clients && npm ci
//   node agents/openai-sdk.mjs [--url http://127.0.0.1:8420] [--model kiln-tiny] [--token TOKEN]
//        [--max-tokens 160] [--case NAME]
//
// Prints one JSON line ({script, passed, failed, cases: [{name, feature,
// pass, error?, ...values}]}); exits 1 with one line naming the failed
// cases when any failed. cmd/kiln/e2e_agents_test.go runs it against the
// built binary.
import {
  parseFlags,
  importOrExit,
  Runner,
  check,
  fits,
  parseJSON,
  WeatherArgs,
  Forecast,
  weatherTool,
  weatherParameters,
  forecastSchema,
  weatherPrompt,
  forecastPrompt,
  clipText,
} from "./common.mjs";

const flags = parseFlags();
const { default: OpenAI } = await importOrExit("openai");
const { zodResponseFormat, zodFunction } = await importOrExit("openai/helpers/zod");

const client = new OpenAI({ baseURL: flags.baseURL, apiKey: flags.token, maxRetries: 0 });
const base = { model: flags.model, temperature: 0, seed: 7 };
const hello = [{ role: "user", content: "Say hello." }];
const weatherMessages = [{ role: "user", content: weatherPrompt }];
const tools = [{ type: "function", function: { ...weatherTool, parameters: weatherParameters, strict: true } }];
const forecastFormat = { type: "json_schema", json_schema: { name: "forecast", strict: true, schema: forecastSchema } };

const r = new Runner("openai-sdk", flags);

// checkLogprobs checks one choice's logprobs.content: an entry a token,
// each with a logprob <= 0, topN alternatives sorted from the most likely,
// the chosen token the most likely of them (temperature 0), and the
// tokens spelling the content.
function checkLogprobs(entries, content, tokens, topN) {
  check(Array.isArray(entries), "no logprobs.content array", { logprobs: entries });
  check(entries.length === tokens, `${entries.length} logprobs entries for ${tokens} completion tokens`);
  for (const [i, e] of entries.entries()) {
    const at = `logprobs.content[${i}]`;
    check(typeof e.token === "string", `${at}.token is not a string`, { entry: e });
    check(typeof e.logprob === "number" && e.logprob <= 0, `${at}.logprob ${e.logprob} is not a number <= 0`, { entry: e });
    check(e.bytes === null || Array.isArray(e.bytes), `${at}.bytes is neither null nor an array`, { entry: e });
    check(Array.isArray(e.top_logprobs) && e.top_logprobs.length === topN, `${at}.top_logprobs has ${e.top_logprobs?.length} entries, want ${topN}`, { entry: e });
    for (const [j, t] of e.top_logprobs.entries()) {
      check(typeof t.token === "string" && typeof t.logprob === "number" && t.logprob <= 0, `${at}.top_logprobs[${j}] is not a token with a logprob <= 0`, { entry: e });
      if (j > 0) check(t.logprob <= e.top_logprobs[j - 1].logprob, `${at}.top_logprobs is not sorted from the most likely`, { entry: e });
    }
    check(e.logprob >= e.top_logprobs[0].logprob - 1e-4, `${at}: the chosen token (${e.logprob}) is less likely than the top alternative (${e.top_logprobs[0].logprob}) at temperature 0`, { entry: e });
  }
  const spelled = entries.map((e) => e.token).join("");
  check(spelled === content, "the logprobs tokens do not spell the content", { tokens: clipText(spelled), content: clipText(content) });
  return { tokens: entries.length, first: entries[0] && { token: entries[0].token, logprob: entries[0].logprob, top: entries[0].top_logprobs.map((t) => t.token) } };
}

// weatherCalls checks assembled tool_calls: at least one, each a function
// call to get_weather with an id and arguments that parse and fit.
function weatherCalls(toolCalls, finishReason) {
  check(Array.isArray(toolCalls) && toolCalls.length > 0, "no tool_calls came back, though tool_choice requires one", { finish_reason: finishReason });
  const calls = toolCalls.map((tc, i) => {
    check(tc.type === "function", `tool_calls[${i}].type is ${tc.type}, want function`);
    check(typeof tc.id === "string" && tc.id.length > 0, `tool_calls[${i}] has no id`);
    check(tc.function?.name === weatherTool.name, `tool_calls[${i}] calls ${tc.function?.name}, want ${weatherTool.name}`);
    const args = parseJSON(tc.function.arguments, `the arguments of tool_calls[${i}]`, finishReason);
    return { tool: tc.function.name, id: tc.id, args: fits(WeatherArgs, args, `the arguments of tool_calls[${i}]`) };
  });
  check(finishReason === "tool_calls", `finish_reason ${finishReason}, want tool_calls`, { calls });
  return calls;
}

await r.run("chat/plain", "chat", async () => {
  const resp = await client.chat.completions.create({ ...base, messages: hello, max_tokens: 8 });
  const c = resp.choices[0];
  check(resp.choices.length === 1 && typeof c.message.content === "string", "not one choice with content");
  return { content: clipText(c.message.content), finish_reason: c.finish_reason, usage: resp.usage };
});

await r.run("logprobs/non-streamed", "logprobs", async () => {
  const resp = await client.chat.completions.create({ ...base, messages: hello, max_tokens: 8, logprobs: true, top_logprobs: 3 });
  const c = resp.choices[0];
  return checkLogprobs(c.logprobs?.content, c.message.content, resp.usage.completion_tokens, 3);
});

await r.run("logprobs/streamed", "logprobs", async () => {
  const stream = await client.chat.completions.create({
    ...base,
    messages: hello,
    max_tokens: 8,
    logprobs: true,
    top_logprobs: 3,
    stream: true,
    stream_options: { include_usage: true },
  });
  const entries = [];
  let content = "";
  let usage;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices ?? []) {
      content += c.delta?.content ?? "";
      entries.push(...(c.logprobs?.content ?? []));
    }
  }
  check(usage, "no usage chunk with stream_options.include_usage");
  return checkLogprobs(entries, content, usage.completion_tokens, 3);
});

// twoChoices checks an n=2 answer: choices 0 and 1, each with content and
// a finish reason; usage counts both completions (each max_tokens long
// when both stopped at the limit) and the prompt once.
function twoChoices(choices, usage, maxTokens) {
  check(choices.length === 2, `${choices.length} choices, want 2`);
  const idx = choices.map((c) => c.index).sort();
  check(idx[0] === 0 && idx[1] === 1, `choice indexes ${idx}, want 0 and 1`);
  for (const c of choices) {
    check(typeof c.content === "string" && c.content.length > 0, `choice ${c.index} has no content`);
    check(typeof c.finish_reason === "string", `choice ${c.index} has no finish_reason`);
  }
  check(usage?.completion_tokens > 0 && usage?.prompt_tokens > 0, "no usage", { usage });
  if (choices.every((c) => c.finish_reason === "length")) {
    check(usage.completion_tokens === 2 * maxTokens, `usage.completion_tokens ${usage.completion_tokens}, want ${2 * maxTokens} (two choices of ${maxTokens})`, { usage });
  }
  return { choices: choices.map((c) => ({ index: c.index, content: clipText(c.content), finish_reason: c.finish_reason })), usage };
}

await r.run("n/non-streamed", "n", async () => {
  const resp = await client.chat.completions.create({ ...base, temperature: 1, messages: hello, max_tokens: 6, n: 2 });
  return twoChoices(
    resp.choices.map((c) => ({ index: c.index, content: c.message.content, finish_reason: c.finish_reason })),
    resp.usage,
    6,
  );
});

await r.run("n/streamed", "n", async () => {
  const stream = await client.chat.completions.create({
    ...base,
    temperature: 1,
    messages: hello,
    max_tokens: 6,
    n: 2,
    stream: true,
    stream_options: { include_usage: true },
  });
  const byIndex = new Map();
  let usage;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices ?? []) {
      const acc = byIndex.get(c.index) ?? { index: c.index, content: "", finish_reason: null };
      acc.content += c.delta?.content ?? "";
      acc.finish_reason = c.finish_reason ?? acc.finish_reason;
      byIndex.set(c.index, acc);
    }
  }
  return twoChoices([...byIndex.values()], usage, 6);
});

await r.run("tool-calls/required-non-streamed", "tool_choice", async () => {
  const resp = await client.chat.completions.create({ ...base, messages: weatherMessages, tools, tool_choice: "required", max_tokens: flags.maxTokens });
  const c = resp.choices[0];
  const calls = weatherCalls(c.message.tool_calls, c.finish_reason);
  check(c.message.content == null || c.message.content === "", "content beside the required tool call", { content: clipText(c.message.content) });
  return { calls, finish_reason: c.finish_reason };
});

await r.run("tool-calls/required-streamed", "tool_choice", async () => {
  // Assemble the tool_calls deltas per index: the first of an index has
  // its id, type and name, the rest append to the arguments.
  const stream = await client.chat.completions.create({
    ...base,
    messages: weatherMessages,
    tools,
    tool_choice: "required",
    max_tokens: flags.maxTokens,
    stream: true,
  });
  const calls = [];
  let finish = null;
  let deltas = 0;
  for await (const chunk of stream) {
    const c = chunk.choices?.[0];
    if (!c) continue;
    finish = c.finish_reason ?? finish;
    for (const d of c.delta?.tool_calls ?? []) {
      deltas++;
      check(Number.isInteger(d.index), "a tool_calls delta without an index", { delta: d });
      const tc = (calls[d.index] ??= { id: "", type: "", function: { name: "", arguments: "" } });
      if (d.id) tc.id = d.id;
      if (d.type) tc.type = d.type;
      if (d.function?.name) tc.function.name += d.function.name;
      if (d.function?.arguments) tc.function.arguments += d.function.arguments;
    }
  }
  return { calls: weatherCalls(calls.filter(Boolean), finish), deltas, finish_reason: finish };
});

await r.run("tool-calls/tool-result-round-trip", "tool_result", async () => {
  // An agent's history after running a tool: the assistant's tool call
  // (content null) and the tool's answer. The next turn answers in text.
  const id = "call_weather_1";
  const resp = await client.chat.completions.create({
    ...base,
    tools,
    tool_choice: "none",
    max_tokens: 16,
    messages: [
      ...weatherMessages,
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: weatherTool.name, arguments: JSON.stringify({ city: "Paris", unit: "celsius" }) } }],
      },
      { role: "tool", tool_call_id: id, content: JSON.stringify({ temperature: 21, unit: "celsius", sky: "sunny" }) },
    ],
  });
  const c = resp.choices[0];
  check(!c.message.tool_calls?.length, "tool_calls with tool_choice none");
  check(typeof c.message.content === "string" && c.message.content.length > 0, "no text answer after the tool result");
  return { content: clipText(c.message.content), finish_reason: c.finish_reason, prompt_tokens: resp.usage.prompt_tokens };
});

await r.run("response_format/json_schema-non-streamed", "response_format", async () => {
  const resp = await client.chat.completions.create({
    ...base,
    messages: [{ role: "user", content: forecastPrompt }],
    response_format: forecastFormat,
    max_tokens: flags.maxTokens * 2,
  });
  const c = resp.choices[0];
  const doc = parseJSON(c.message.content, "the content's fields", c.finish_reason);
  return { object: fits(Forecast, doc, "the content's fields"), finish_reason: c.finish_reason };
});

await r.run("response_format/json_schema-streamed", "response_format", async () => {
  const stream = await client.chat.completions.create({
    ...base,
    messages: [{ role: "user", content: forecastPrompt }],
    response_format: forecastFormat,
    max_tokens: flags.maxTokens * 2,
    stream: true,
  });
  let content = "";
  let finish = null;
  let chunks = 0;
  for await (const chunk of stream) {
    const c = chunk.choices?.[0];
    if (!c) continue;
    chunks++;
    content += c.delta?.content ?? "";
    finish = c.finish_reason ?? finish;
  }
  const doc = parseJSON(content, "the streamed content's fields", finish);
  return { object: fits(Forecast, doc, "the streamed content's fields"), chunks, finish_reason: finish };
});

await r.run("parse/zodResponseFormat", "response_format", async () => {
  const resp = await client.chat.completions.parse({
    ...base,
    messages: [{ role: "user", content: forecastPrompt }],
    response_format: zodResponseFormat(Forecast, "forecast"),
    max_tokens: flags.maxTokens * 2,
  });
  const m = resp.choices[0].message;
  check(m.parsed != null, "no parsed message", { content: clipText(m.content), finish_reason: resp.choices[0].finish_reason });
  return { object: fits(Forecast, m.parsed, "the parsed message's fields") };
});

await r.run("parse/zodFunction", "tool_choice", async () => {
  const resp = await client.chat.completions.parse({
    ...base,
    messages: weatherMessages,
    tools: [zodFunction({ name: weatherTool.name, description: weatherTool.description, parameters: WeatherArgs })],
    tool_choice: "required",
    max_tokens: flags.maxTokens,
  });
  const tc = resp.choices[0].message.tool_calls?.[0];
  check(tc?.function?.parsed_arguments, "no parsed tool call arguments", { tool_calls: resp.choices[0].message.tool_calls });
  return { tool: tc.function.name, args: fits(WeatherArgs, tc.function.parsed_arguments, "the parsed arguments") };
});

r.finish();
