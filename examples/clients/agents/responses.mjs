// The OpenAI Responses API (POST /v1/responses) through two real clients,
// unmodified: the official openai npm package's responses.create (plain,
// streamed, a function tool under tool_choice required, text.format
// json_schema, logprobs, a previous_response_id round trip with
// function_call_output and responses.retrieve, responses.parse with
// zodTextFormat), and the
// Vercel AI SDK's default openai provider (createOpenAI()(model) speaks
// Responses: generateText, streamText, generateObject and a tool loop).
//
//   cd examples/clients && npm ci
//   node agents/responses.mjs [--url http://127.0.0.1:8420] [--model kiln-tiny] [--token TOKEN]
//        [--max-tokens 160] [--case NAME]
//
// Prints one JSON line, as the other agent scripts do (common.mjs);
// cmd/kiln/e2e_agents_test.go runs it against the built binary.
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
  weatherLoopOptions,
} from "./common.mjs";

const flags = parseFlags();
const { default: OpenAI } = await importOrExit("openai");
const { zodTextFormat } = await importOrExit("openai/helpers/zod");
const { generateText, streamText, generateObject, tool, stepCountIs } = await importOrExit("ai");
const { createOpenAI } = await importOrExit("@ai-sdk/openai");

const client = new OpenAI({ baseURL: flags.baseURL, apiKey: flags.token, maxRetries: 0 });
const base = { model: flags.model, temperature: 0 };
const weatherFn = { type: "function", ...weatherTool, parameters: weatherParameters, strict: true };
const forecastFormat = { format: { type: "json_schema", name: "forecast", strict: true, schema: forecastSchema } };

const r = new Runner("responses", flags);

// outputText is the text of a response's message items.
function outputText(resp) {
  return resp.output
    .filter((it) => it.type === "message")
    .flatMap((it) => it.content)
    .filter((c) => c.type === "output_text")
    .map((c) => c.text)
    .join("");
}

// weatherCalls checks a response's function_call items: at least one, each
// to get_weather with a call_id and arguments that parse and fit.
function weatherCalls(resp) {
  const items = resp.output.filter((it) => it.type === "function_call");
  check(items.length > 0, "no function_call item came back, though tool_choice requires one", { status: resp.status, output: resp.output });
  check(resp.status === "completed", `status ${resp.status}, want completed`);
  return items.map((it, i) => {
    check(it.name === weatherTool.name, `output function_call ${i} calls ${it.name}, want ${weatherTool.name}`);
    check(typeof it.call_id === "string" && it.call_id.length > 0, `function_call ${i} has no call_id`);
    const args = parseJSON(it.arguments, `the arguments of function_call ${i}`, resp.status);
    return { tool: it.name, id: it.call_id, args: fits(WeatherArgs, args, `the arguments of function_call ${i}`) };
  });
}

// collect reads a stream of typed events: their types in order, checked
// to number from 0 in steps of 1, to open with response.created and
// .in_progress and to end with one terminal event, whose response it
// returns with the concatenated text and argument deltas.
async function collect(stream) {
  const types = [];
  let text = "";
  const args = new Map();
  let final = null;
  for await (const ev of stream) {
    check(ev.sequence_number === types.length, `event ${types.length} (${ev.type}) has sequence_number ${ev.sequence_number}`);
    types.push(ev.type);
    if (ev.type === "response.output_text.delta") text += ev.delta;
    if (ev.type === "response.function_call_arguments.delta") args.set(ev.item_id, (args.get(ev.item_id) ?? "") + ev.delta);
    if (["response.completed", "response.incomplete", "response.failed"].includes(ev.type)) final = ev.response;
  }
  check(types[0] === "response.created" && types[1] === "response.in_progress", `the stream opens with ${types.slice(0, 2)}`);
  check(final && types.at(-1).startsWith("response.") && final === final, `the stream ends with ${types.at(-1)}, not a terminal event`);
  return { types, text, args, final };
}

await r.run("openai/create-plain", "responses", async () => {
  const resp = await client.responses.create({ ...base, input: "Say hello.", max_output_tokens: 8 });
  check(resp.object === "response" && resp.id.startsWith("resp_"), "not a response object", { id: resp.id });
  check(resp.output_text === outputText(resp) && resp.output_text.length > 0, "no output_text");
  check(resp.usage.input_tokens > 0 && resp.usage.output_tokens === 8, "usage does not count the 8 output tokens", { usage: resp.usage });
  check(resp.status === "incomplete" && resp.incomplete_details?.reason === "max_output_tokens", `status ${resp.status}, want incomplete at max_output_tokens`);
  return { text: clipText(resp.output_text), response_status: resp.status, usage: resp.usage };
});

await r.run("openai/create-streamed", "responses", async () => {
  const stream = await client.responses.create({ ...base, input: [{ role: "user", content: [{ type: "input_text", text: "Say hello." }] }], instructions: "Be brief.", max_output_tokens: 8, stream: true });
  const { types, text, final } = await collect(stream);
  for (const want of ["response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.output_item.done"]) {
    check(types.includes(want), `no ${want} event`, { types });
  }
  check(text === outputText(final) && text.length > 0, "the deltas do not spell the final text", { deltas: clipText(text), final: clipText(outputText(final)) });
  check(final.instructions === "Be brief.", "the instructions are not echoed");
  return { text: clipText(text), events: types.length, terminal: types.at(-1) };
});

await r.run("openai/tool-required", "tool_choice", async () => {
  const resp = await client.responses.create({ ...base, input: weatherPrompt, tools: [weatherFn], tool_choice: "required", max_output_tokens: flags.maxTokens });
  return { calls: weatherCalls(resp), response_status: resp.status };
});

await r.run("openai/tool-required-streamed", "tool_choice", async () => {
  const stream = await client.responses.create({ ...base, input: weatherPrompt, tools: [weatherFn], tool_choice: "required", parallel_tool_calls: false, max_output_tokens: flags.maxTokens, stream: true });
  const { types, args, final } = await collect(stream);
  check(types.includes("response.function_call_arguments.done"), "no function_call_arguments.done event", { types });
  const calls = weatherCalls(final);
  check(calls.length === 1, `${calls.length} calls with parallel_tool_calls false`);
  const item = final.output.find((it) => it.type === "function_call");
  check(args.get(item.id) === item.arguments, "the argument deltas do not spell the arguments", { deltas: args.get(item.id), arguments: item.arguments });
  return { calls, terminal: types.at(-1) };
});

await r.run("openai/tool-result-round-trip", "tool_result", async () => {
  // Turn 1 calls the tool; turn 2 continues it by previous_response_id
  // with the tool's output only.
  const first = await client.responses.create({ ...base, input: weatherPrompt, tools: [weatherFn], tool_choice: "required", max_output_tokens: flags.maxTokens });
  const calls = weatherCalls(first);
  const second = await client.responses.create({
    ...base,
    previous_response_id: first.id,
    input: calls.map((c) => ({ type: "function_call_output", call_id: c.id, output: JSON.stringify({ temperature: 21, sky: "sunny" }) })),
    tools: [weatherFn],
    tool_choice: "none",
    max_output_tokens: 12,
  });
  check(second.previous_response_id === first.id, "previous_response_id is not echoed");
  const kept = await client.responses.retrieve(first.id);
  check(kept.id === first.id && JSON.stringify(kept.output) === JSON.stringify(first.output), "responses.retrieve does not give the first response back", { kept: kept.output });
  // The call (first.usage.output_tokens) is in the second prompt, with
  // the output; the tool listing is not (tool_choice none hides it).
  check(second.usage.input_tokens > first.usage.output_tokens + 10, `the second turn's prompt (${second.usage.input_tokens} tokens) does not hold the first turn's call (${first.usage.output_tokens})`);
  check(second.output_text.length > 0, "no answer after the tool result");
  return { calls, text: clipText(second.output_text), cached_tokens: second.usage.input_tokens_details?.cached_tokens, input_tokens: second.usage.input_tokens };
});

await r.run("openai/json_schema", "response_format", async () => {
  const resp = await client.responses.create({ ...base, input: forecastPrompt, text: forecastFormat, max_output_tokens: flags.maxTokens * 2 });
  return { object: fits(Forecast, parseJSON(resp.output_text, "the document", resp.status), "the document"), response_status: resp.status };
});

await r.run("openai/json_schema-streamed", "response_format", async () => {
  const stream = await client.responses.create({ ...base, input: forecastPrompt, text: forecastFormat, max_output_tokens: flags.maxTokens * 2, stream: true });
  const { text, final } = await collect(stream);
  return { object: fits(Forecast, parseJSON(text, "the document", final.status), "the document"), response_status: final.status };
});

await r.run("openai/parse-zodTextFormat", "response_format", async () => {
  const resp = await client.responses.parse({ ...base, input: forecastPrompt, text: { format: zodTextFormat(Forecast, "forecast") }, max_output_tokens: flags.maxTokens * 2 });
  return { object: fits(Forecast, resp.output_parsed, "output_parsed") };
});

await r.run("openai/logprobs", "logprobs", async () => {
  const resp = await client.responses.create({ ...base, input: "Say hello.", max_output_tokens: 6, include: ["message.output_text.logprobs"], top_logprobs: 3 });
  const part = resp.output.find((it) => it.type === "message").content[0];
  const lps = part.logprobs ?? [];
  check(lps.length === resp.usage.output_tokens, `${lps.length} logprobs for ${resp.usage.output_tokens} tokens`);
  check(lps.map((e) => e.token).join("") === part.text, "the logprobs tokens do not spell the text");
  for (const e of lps) check(e.logprob <= 0 && e.top_logprobs.length === 3, "an entry without a logprob <= 0 and 3 alternatives", { entry: e });
  return { tokens: lps.length, first: { token: lps[0].token, logprob: lps[0].logprob, top: lps[0].top_logprobs.map((t) => t.token) } };
});

// The AI SDK's default provider: createOpenAI()(model) is a Responses model.
const openai = createOpenAI({ baseURL: flags.baseURL, apiKey: flags.token });
const model = openai(flags.model);
const common = { model, maxRetries: 0, temperature: 0 };

await r.run("ai-sdk/generateText", "responses", async () => {
  const res = await generateText({ ...common, prompt: "Say hello.", maxOutputTokens: 16 });
  check(res.text.length > 0, "empty text");
  check(res.response.id?.startsWith("resp_"), `response id ${res.response.id}: not a Responses call`);
  return { text: clipText(res.text), finish_reason: res.finishReason, usage: res.usage };
});

await r.run("ai-sdk/streamText", "responses", async () => {
  const res = streamText({ ...common, prompt: "Say hello.", maxOutputTokens: 16, onError: ({ error }) => { throw error; } });
  let text = "";
  let deltas = 0;
  for await (const d of res.textStream) {
    text += d;
    deltas++;
  }
  check(text.length > 0 && deltas > 1, `${deltas} deltas, text ${JSON.stringify(text)}`);
  return { text: clipText(text), deltas, finish_reason: await res.finishReason };
});

await r.run("ai-sdk/generateObject", "response_format", async () => {
  const res = await generateObject({ ...common, schema: Forecast, schemaName: "forecast", prompt: forecastPrompt, maxOutputTokens: flags.maxTokens * 2 });
  return { object: fits(Forecast, res.object, "the object"), finish_reason: res.finishReason };
});

await r.run("ai-sdk/tool-loop", "tool_result", async () => {
  // Step 1 must call get_weather; the SDK runs it and sends the result
  // back (with store on, as item references to the stored call); step 2
  // answers in text.
  const executed = [];
  const res = await generateText({ ...common, ...weatherLoopOptions({ tool, stepCountIs }, executed, flags.maxTokens) });
  check(res.steps.length === 2, `${res.steps.length} steps, want 2 (a tool call, then the answer)`);
  const calls = res.steps[0].toolCalls.map((tc) => ({ tool: tc.toolName, id: tc.toolCallId, args: fits(WeatherArgs, tc.input, "the call's input") }));
  check(calls.length > 0 && executed.length === calls.length, `execute ran ${executed.length} times for ${calls.length} calls`);
  const body = res.steps[1].request.body ?? {};
  const sent = (typeof body === "string" ? JSON.parse(body) : body).input ?? [];
  const outputs = sent.filter((it) => it.type === "function_call_output");
  check(outputs.length === calls.length, `the second request carries ${outputs.length} function_call_output items, want ${calls.length}`);
  check(res.text.length > 0, "the last step is not a text answer");
  return { calls, tool_messages: outputs.length, steps: res.steps.length, text: clipText(res.text) };
});

r.finish();
