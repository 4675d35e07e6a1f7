// LangChain's ChatOpenAI (@langchain/openai over @langchain/core),
// unmodified, driving kiln serve the way an agent does: plain invoke and
// stream, bound tools under a required ('any') and a named tool_choice, a
// streamed tool call, a tool-result round trip, and withStructuredOutput
// by JSON Schema and by function calling.
//
//   cd examples/clients && npm ci
//   node agents/langchain.mjs [--url http://127.0.0.1:8420] [--model kiln-tiny] [--token TOKEN]
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
  weatherTool,
  weatherPrompt,
  forecastPrompt,
  clipText,
} from "./common.mjs";

const flags = parseFlags();
const { ChatOpenAI } = await importOrExit("@langchain/openai");
const { tool } = await importOrExit("@langchain/core/tools");
const { HumanMessage, ToolMessage } = await importOrExit("@langchain/core/messages");

// chat is a ChatOpenAI on kiln's chat completions with a token budget.
const chat = (maxTokens) =>
  new ChatOpenAI({
    configuration: { baseURL: flags.baseURL },
    apiKey: flags.token,
    model: flags.model,
    temperature: 0,
    maxTokens,
    maxRetries: 0,
  });

const getWeather = tool(async (args) => JSON.stringify({ temperature: 21, unit: args.unit, sky: "sunny" }), {
  name: weatherTool.name,
  description: weatherTool.description,
  schema: WeatherArgs,
});

// weatherCalls checks the tool calls of a constrained reply: at least one,
// none that LangChain could not parse, each to get_weather with arguments
// that fit its schema.
function weatherCalls(msg) {
  const finish = msg.response_metadata?.finish_reason;
  for (const b of msg.invalid_tool_calls ?? []) {
    // LangChain could not parse them: say why, as the other scripts do.
    parsedFits(WeatherArgs, b.args ?? "", `the arguments of ${b.name}`, finish);
    throw new CaseFailure(`LangChain could not parse a tool call: ${b.error}`, { tool: b.name, args: clipText(b.args) });
  }
  const calls = msg.tool_calls ?? [];
  check(calls.length > 0, "no tool call came back, though the tool choice requires one", { content: clipText(msg.content) });
  return calls.map((tc) => {
    check(tc.name === weatherTool.name, `called ${tc.name}, want ${weatherTool.name}`);
    check(typeof tc.id === "string" && tc.id.length > 0, "a tool call without an id");
    return { tool: tc.name, id: tc.id, args: fits(WeatherArgs, tc.args, `the arguments of ${tc.name}`) };
  });
}

const r = new Runner("langchain", flags);

await r.run("invoke/plain", "chat", async () => {
  const msg = await chat(16).invoke("Say hello.");
  check(typeof msg.content === "string" && msg.content.length > 0, "empty content");
  check(msg.usage_metadata?.output_tokens > 0, "no output tokens in usage_metadata", { usage: msg.usage_metadata });
  return { content: clipText(msg.content), finish_reason: msg.response_metadata?.finish_reason, usage: msg.usage_metadata };
});

await r.run("stream/plain", "chat", async () => {
  let chunks = 0;
  let text = "";
  for await (const c of await chat(16).stream("Say hello.")) {
    chunks++;
    text += typeof c.content === "string" ? c.content : "";
  }
  check(chunks > 1 && text.length > 0, `${chunks} chunks, text ${JSON.stringify(text)}: nothing streamed`);
  return { chunks, content: clipText(text) };
});

for (const [name, choice] of [
  ["any", "any"],
  ["required", "required"],
  ["named", weatherTool.name],
]) {
  await r.run(`bindTools/tool_choice-${name}`, "tool_choice", async () => {
    const msg = await chat(flags.maxTokens).bindTools([getWeather], { tool_choice: choice }).invoke(weatherPrompt);
    const calls = weatherCalls(msg);
    return { calls, finish_reason: msg.response_metadata?.finish_reason };
  });
}

await r.run("stream/bindTools-required", "tool_choice", async () => {
  // The chunks' tool_call_chunks, concatenated, become the tool calls.
  let full;
  let chunks = 0;
  for await (const c of await chat(flags.maxTokens).bindTools([getWeather], { tool_choice: "required" }).stream(weatherPrompt)) {
    chunks++;
    full = full ? full.concat(c) : c;
  }
  check(full, "no chunks");
  // The raw argument text first: LangChain parses partial JSON leniently.
  for (const tcc of full.tool_call_chunks ?? []) parsedFits(WeatherArgs, tcc.args ?? "", `the arguments of ${tcc.name}`, full.response_metadata?.finish_reason);
  const calls = weatherCalls(full);
  return { calls, chunks };
});

await r.run("invoke/tool-result-round-trip", "tool_result", async () => {
  // The model's tool call is run and its result sent back as a ToolMessage;
  // the second call (tool_choice none) answers in text.
  const question = new HumanMessage(weatherPrompt);
  const first = await chat(flags.maxTokens).bindTools([getWeather], { tool_choice: "required" }).invoke([question]);
  const calls = weatherCalls(first);
  const results = [];
  for (const tc of first.tool_calls) {
    results.push(new ToolMessage({ tool_call_id: tc.id, content: await getWeather.invoke(tc.args) }));
  }
  const answer = await chat(16).bindTools([getWeather], { tool_choice: "none" }).invoke([question, first, ...results]);
  check((answer.tool_calls ?? []).length === 0, "a tool call with tool_choice none");
  check(typeof answer.content === "string" && answer.content.length > 0, "empty answer after the tool result");
  return { calls, tool_messages: results.length, content: clipText(answer.content) };
});

for (const method of ["jsonSchema", "functionCalling"]) {
  // jsonSchema sends response_format json_schema; functionCalling a tool
  // named by tool_choice.
  await r.run(`withStructuredOutput/${method}`, method === "jsonSchema" ? "response_format" : "tool_choice", async () => {
    const llm = chat(flags.maxTokens * 2).withStructuredOutput(Forecast, { method, name: "forecast", strict: true, includeRaw: true });
    const { raw, parsed, parsingError } = await llm.invoke(forecastPrompt);
    if (parsed == null) {
      // Say why from what came back: text that is not JSON, or fields
      // that do not fit.
      const out = method === "jsonSchema" ? raw.content : raw.tool_calls?.[0]?.args ?? raw.invalid_tool_calls?.[0]?.args ?? "";
      parsedFits(Forecast, out, "the structured output's fields", raw.response_metadata?.finish_reason);
      throw parsingError ?? new Error("LangChain returned no structured output");
    }
    return { object: fits(Forecast, parsed, "the structured output's fields") };
  });
}

r.finish();
