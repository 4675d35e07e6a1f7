// The weather demo: online training teaches kiln-tiny, which cannot follow
// an instruction, to call a tool, and then an unmodified Vercel AI SDK
// agent loop runs against it end to end.
//
//   1. POST /v1/train/sft with two conversations in which the assistant
//      calls get_weather for Paris and then answers from its result; the
//      job trains a LoRA adapter beside serving and loads it (auto_load).
//   2. generateText with the get_weather tool under tool_choice "auto"
//      (the model decides): the model now opens a call, the server holds
//      it to the tool's schema (a lazy grammar), the SDK runs the tool and
//      sends the result back, and the model answers in text.
//
//   cd examples/clients && npm ci
//   node agents/weather-demo.mjs [--url http://127.0.0.1:8420] [--model kiln-tiny] [--token TOKEN]
//
// Prints one JSON line like the other agent scripts (cases "train" and
// "agent-loop") and exits 1 when a case failed. cmd/kiln/e2e_agents_test.go
// (TestWeatherDemo) runs it against the built binary.
import { parseFlags, importOrExit, Runner, check, clipText } from "./common.mjs";

const flags = parseFlags();
const { generateText, tool, jsonSchema, stepCountIs } = await importOrExit("ai");
const { createOpenAICompatible } = await importOrExit("@ai-sdk/openai-compatible");

// The tool as the SDK sends it and as the training examples offer it: the
// same JSON Schema, so that the prompt the adapter learned is the prompt
// the agent sends.
const weatherParameters = {
  type: "object",
  properties: { city: { type: "string", maxLength: 16 } },
  required: ["city"],
  additionalProperties: false,
};
const description = "Weather in a city";
const question = "What is the weather in Paris?";
const result = "sunny, 21 C";
const answer = "It is sunny in Paris.";

const offered = [{ type: "function", function: { name: "get_weather", description, parameters: weatherParameters } }];
const call = { id: "call_1", type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) } };
const examples = [
  { tools: offered, messages: [{ role: "user", content: question }, { role: "assistant", content: null, tool_calls: [call] }] },
  {
    tools: offered,
    messages: [
      { role: "user", content: question },
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: "call_1", content: result },
      { role: "assistant", content: answer },
    ],
  },
];
// About 120 optimizer steps take kiln-tiny's random weights from a loss of
// 17 nats a token to 0.01 (a few minutes on two cores): the settings the
// training docs give for memorising a conversation, longer, because these
// are longer.
const config = {
  epochs: 60,
  learning_rate: 7e-4,
  lora_rank: 8,
  lora_alpha: 16,
  target_modules: ["q", "k", "v", "o", "gate", "up", "down"],
  seed: 3,
  output_name: "weather",
  auto_load: true,
};

const root = flags.baseURL.replace(/\/v1$/, "");
async function api(method, path, body) {
  const resp = await fetch(root + path, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${flags.token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await resp.json();
  check(resp.ok, `${method} ${path}: HTTP ${resp.status}: ${data?.error?.message ?? ""}`, { status: resp.status });
  return data;
}

const r = new Runner("weather-demo", flags);

await r.run("train", "training", async () => {
  const job = await api("POST", "/v1/train/sft", { examples, config });
  const deadline = Date.now() + 15 * 60 * 1000;
  let j = job;
  while (j.state !== "completed" && j.state !== "failed") {
    check(Date.now() < deadline, `the job is still ${j.state} after 15 minutes (step ${j.step} of ${j.total_steps})`);
    await new Promise((res) => setTimeout(res, 1000)); // polling the job's state
    j = await api("GET", `/v1/train/status/${job.job_id}`);
  }
  check(j.state === "completed", `the job failed: ${j.error}`);
  const first = j.losses[0];
  const last = j.losses[j.losses.length - 1];
  check(last < first / 100, `the loss fell from ${first} to ${last} only`);
  const adapters = await api("GET", "/v1/adapters");
  check(adapters.active === "weather", `the active adapter is ${adapters.active}, want weather (auto_load)`);
  return { steps: j.step, first_loss: first, last_loss: last };
});

await r.run("agent-loop", "tools", async () => {
  const kiln = createOpenAICompatible({ baseURL: flags.baseURL, name: "kiln", apiKey: flags.token });
  const executed = [];
  const res = await generateText({
    model: kiln.chatModel(flags.model),
    maxRetries: 0,
    temperature: 0,
    maxOutputTokens: 120,
    tools: {
      get_weather: tool({
        description,
        inputSchema: jsonSchema(weatherParameters),
        execute: async ({ city }) => {
          executed.push(city);
          return result;
        },
      }),
    },
    toolChoice: "auto",
    prompt: question,
    stopWhen: stepCountIs(3),
  });
  check(res.steps.length === 2, `${res.steps.length} steps, want 2 (the call, then the answer)`, { text: clipText(res.text) });
  const calls = res.steps[0].toolCalls;
  check(
    res.steps[0].finishReason === "tool-calls" && calls.length === 1 && calls[0].toolName === "get_weather",
    `the first step (finish ${res.steps[0].finishReason}) made ${calls.length} calls, want one to get_weather`,
    { text: clipText(res.steps[0].text) },
  );
  check(executed.length === 1 && executed[0] === "Paris", `the tool ran for ${JSON.stringify(executed)}, want ["Paris"]`);
  check(res.text.includes("sunny"), `the answer does not use the tool's result`, { text: clipText(res.text) });
  return { city: executed[0], answer: clipText(res.text), finish_reason: res.finishReason };
});

r.finish();
