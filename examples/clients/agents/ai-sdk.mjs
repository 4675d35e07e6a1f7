// The Vercel AI SDK (ai, @ai-sdk/openai-compatible, @ai-sdk/openai),
// unmodified, driving kiln serve the way an agent does: plain text, tools
// under every toolChoice, a streamed tool call, a tool-result loop, and
// generateObject and streamObject with a nested schema.
//
//   cd examples/clients && npm ci
//   node agents/ai-sdk.mjs [--url http://127.0.0.1:8420] [--model kiln-tiny] [--token TOKEN]
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
  parsedFits,
  CaseFailure,
  WeatherArgs,
  Forecast,
  Units,
  weatherTool,
  weatherPrompt,
  forecastPrompt,
  clipText,
  weatherLoopOptions,
} from "./common.mjs";

const flags = parseFlags();
const { generateText, streamText, generateObject, streamObject, tool, jsonSchema, stepCountIs } = await importOrExit("ai");
const { createOpenAICompatible } = await importOrExit("@ai-sdk/openai-compatible");
const { createOpenAI } = await importOrExit("@ai-sdk/openai");
const { z } = await importOrExit("zod");

// supportsStructuredOutputs: generateObject sends response_format
// json_schema (strict) instead of json_object.
const kiln = createOpenAICompatible({
  baseURL: flags.baseURL,
  name: "kiln",
  apiKey: flags.token,
  supportsStructuredOutputs: true,
});
const model = kiln.chatModel(flags.model);
const common = { model, maxRetries: 0, temperature: 0, seed: 7 };

// get_weather takes zod parameters; get_time, a second tool for the named
// choice to pick between, a plain JSON Schema.
const tools = {
  get_weather: tool({ description: weatherTool.description, inputSchema: WeatherArgs }),
  get_time: tool({
    description: "Get the current time in a time zone",
    inputSchema: jsonSchema({
      type: "object",
      properties: { zone: { type: "string", enum: ["utc", "cet", "pst"] } },
      required: ["zone"],
      additionalProperties: false,
    }),
  }),
};
const TimeArgs = z.strictObject({ zone: z.enum(["utc", "cet", "pst"]) });
const argSchemas = { get_weather: WeatherArgs, get_time: TimeArgs };

// calledTools checks the tool calls of a constrained step: at least one,
// each to a known tool (or the one named) with arguments that the SDK
// parsed and that fit the tool's schema.
function calledTools(toolCalls, finishReason, only) {
  check(toolCalls.length > 0, "no tool call came back, though the tool choice requires one");
  return toolCalls.map((tc) => {
    check(argSchemas[tc.toolName], `a call to an unknown tool ${tc.toolName}`, { tool: tc.toolName });
    if (only) check(tc.toolName === only, `called ${tc.toolName}, want the named ${only}`, { tool: tc.toolName });
    const what = `the arguments of ${tc.toolName}`;
    if (tc.invalid) {
      // The SDK could not parse or validate them: say which, as the other
      // scripts do, then fall back to the SDK's reason.
      parsedFits(argSchemas[tc.toolName], tc.input, what, finishReason);
      throw new CaseFailure(`the SDK rejected the tool call to ${tc.toolName}: ${tc.error?.message ?? tc.error}`, { tool: tc.toolName, input: tc.input });
    }
    return { tool: tc.toolName, args: fits(argSchemas[tc.toolName], tc.input, what) };
  });
}

// explainNoObject turns the SDK's NoObjectGeneratedError into the reason:
// the text that is not JSON, or the fields that do not fit.
function explainNoObject(err) {
  if (typeof err?.text === "string") parsedFits(Forecast, err.text, "the object's fields", err.finishReason);
  throw err;
}

const r = new Runner("ai-sdk", flags);

await r.run("generateText/plain", "chat", async () => {
  const res = await generateText({ ...common, prompt: "Say hello.", maxOutputTokens: 16 });
  check(typeof res.text === "string" && res.text.length > 0, "empty text");
  check(res.usage.outputTokens > 0, "no output tokens in usage", { usage: res.usage });
  return { text: clipText(res.text), finish_reason: res.finishReason, output_tokens: res.usage.outputTokens };
});

await r.run("streamText/plain", "chat", async () => {
  const res = streamText({ ...common, prompt: "Say hello.", maxOutputTokens: 16, onError: () => {} });
  let deltas = 0;
  for await (const part of res.fullStream) {
    if (part.type === "error") throw part.error;
    if (part.type === "text-delta") deltas++;
  }
  const text = await res.text;
  check(deltas > 0 && text.length > 0, "no text deltas");
  return { deltas, text: clipText(text), finish_reason: await res.finishReason };
});

await r.run("openai-provider/plain", "chat", async () => {
  // @ai-sdk/openai's chat-completions model pointed at kiln.
  const openai = createOpenAI({ baseURL: flags.baseURL, apiKey: flags.token });
  const res = await generateText({ ...common, model: openai.chat(flags.model), prompt: "Say hello.", maxOutputTokens: 16 });
  check(res.text.length > 0, "empty text");
  return { text: clipText(res.text), finish_reason: res.finishReason };
});

await r.run("generateText/toolChoice-required", "tool_choice", async () => {
  const res = await generateText({ ...common, tools, toolChoice: "required", prompt: weatherPrompt, maxOutputTokens: flags.maxTokens });
  const calls = calledTools(res.toolCalls, res.finishReason);
  check(res.finishReason === "tool-calls", `finish reason ${res.finishReason}, want tool-calls`, { calls });
  return { calls, finish_reason: res.finishReason };
});

await r.run("generateText/toolChoice-named", "tool_choice", async () => {
  const res = await generateText({
    ...common,
    tools,
    toolChoice: { type: "tool", toolName: "get_weather" },
    prompt: weatherPrompt,
    maxOutputTokens: flags.maxTokens,
  });
  const calls = calledTools(res.toolCalls, res.finishReason, "get_weather");
  check(Units.includes(calls[0].args.unit), "unit outside the enum", { calls });
  return { calls, finish_reason: res.finishReason };
});

await r.run("generateText/toolChoice-auto", "tools", async () => {
  // Unconstrained: the model may answer in text or call a tool; only the
  // shape is checked.
  const res = await generateText({ ...common, tools, toolChoice: "auto", prompt: weatherPrompt, maxOutputTokens: flags.maxTokens });
  check(res.text.length > 0 || res.toolCalls.length > 0, "neither text nor a tool call");
  for (const tc of res.toolCalls) check(argSchemas[tc.toolName], `a call to an unknown tool ${tc.toolName}`);
  return { text: clipText(res.text), tools: res.toolCalls.map((tc) => tc.toolName), finish_reason: res.finishReason };
});

await r.run("generateText/toolChoice-none", "tool_choice", async () => {
  const res = await generateText({ ...common, tools, toolChoice: "none", prompt: weatherPrompt, maxOutputTokens: 16 });
  check(res.toolCalls.length === 0, `${res.toolCalls.length} tool calls with tool choice none`);
  check(res.text.length > 0, "empty text");
  return { text: clipText(res.text), finish_reason: res.finishReason };
});

await r.run("streamText/toolChoice-required", "tool_choice", async () => {
  const res = streamText({
    ...common,
    tools,
    toolChoice: "required",
    prompt: weatherPrompt,
    maxOutputTokens: flags.maxTokens,
    onError: () => {},
  });
  const toolCalls = [];
  let inputDeltas = 0;
  for await (const part of res.fullStream) {
    if (part.type === "error") throw part.error;
    if (part.type === "tool-input-delta") inputDeltas++;
    if (part.type === "tool-call") toolCalls.push(part);
  }
  const finish = await res.finishReason;
  const calls = calledTools(toolCalls, finish);
  check(finish === "tool-calls", `finish reason ${finish}, want tool-calls`, { calls });
  return { calls, input_deltas: inputDeltas, finish_reason: finish };
});

await r.run("generateText/tool-result-loop", "tool_result", async () => {
  // An agent loop: the first step must call get_weather, whose execute
  // returns a result; the SDK sends it back as a tool message and the
  // second step (tool choice none) answers in text.
  const executed = [];
  const res = await generateText({ ...common, ...weatherLoopOptions({ tool, stepCountIs }, executed, flags.maxTokens) });
  check(res.steps.length === 2, `${res.steps.length} steps, want 2 (a tool call, then the answer)`);
  const calls = calledTools(res.steps[0].toolCalls, res.steps[0].finishReason, "get_weather");
  check(executed.length === calls.length, `execute ran ${executed.length} times for ${calls.length} calls`);
  const sent = JSON.parse(res.steps[1].request.body ?? "{}").messages ?? [];
  const toolMsgs = sent.filter((m) => m.role === "tool");
  check(toolMsgs.length === calls.length, `the second request carries ${toolMsgs.length} tool messages, want ${calls.length}`);
  const ids = new Set(res.steps[0].toolCalls.map((tc) => tc.toolCallId));
  check(toolMsgs.every((m) => ids.has(m.tool_call_id)), "a tool message answers an unknown tool_call_id");
  check(res.steps[1].toolCalls.length === 0 && res.text.length > 0, "the last step is not a text answer");
  return { calls, tool_messages: toolMsgs.length, steps: res.steps.length, text: clipText(res.text) };
});

await r.run("generateObject/nested", "response_format", async () => {
  const res = await generateObject({ ...common, schema: Forecast, schemaName: "forecast", prompt: forecastPrompt, maxOutputTokens: flags.maxTokens * 2 }).catch(
    (err) => explainNoObject(err),
  );
  const object = fits(Forecast, res.object, "the object's fields");
  return { object, finish_reason: res.finishReason };
});

await r.run("streamObject/nested", "response_format", async () => {
  let streamError;
  const res = streamObject({
    ...common,
    schema: Forecast,
    schemaName: "forecast",
    prompt: forecastPrompt,
    maxOutputTokens: flags.maxTokens * 2,
    onError: ({ error }) => {
      streamError = error;
    },
  });
  let partials = 0;
  for await (const _ of res.partialObjectStream) partials++;
  if (streamError) throw streamError;
  const object = fits(Forecast, await res.object.catch((err) => explainNoObject(err)), "the object's fields");
  check(partials > 1, `${partials} partial objects: the document did not stream`);
  return { object, partials };
});

r.finish();
