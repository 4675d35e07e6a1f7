// What the agent client scripts (ai-sdk.mjs, langchain.mjs, openai-sdk.mjs)
// share: their flags, the schemas their tools and structured outputs use,
// a case runner that records each sub-case's pass or failure with its key
// values, and the one JSON line (stdout) and one-line reason (stderr) they
// end with.
//
// The model behind kiln serve in the tests is kiln-tiny, an untrained
// model whose text is random English words. The cases therefore check the
// protocol, not the answers: where the server constrains the output (a
// required or named tool_choice, a json_schema response format) the
// arguments or the document must parse and fit the schema; elsewhere only
// the shape is checked.
const { z } = await importOrExit("zod");

// parseFlags reads --url (the server, with or without /v1; --base-url is
// the same), --model, --token (default KILN_ACCESS_TOKEN), --max-tokens
// (the budget of the constrained cases, whose JSON is about one token a
// character in kiln-tiny's vocabulary) and --case (a substring: only the
// cases whose name holds it run).
export function parseFlags(argv = process.argv.slice(2)) {
  const args = [...argv];
  const opt = (name, def) => {
    const i = args.indexOf(name);
    return i >= 0 ? args.splice(i, 2)[1] : def;
  };
  const url = opt("--url", opt("--base-url", process.env.KILN_BASE_URL || "http://127.0.0.1:8420"));
  const flags = {
    baseURL: url.replace(/\/+$/, "").replace(/(\/v1)?$/, "/v1"),
    model: opt("--model", "kiln-tiny"),
    token: opt("--token", process.env.KILN_ACCESS_TOKEN || "unused"),
    // A forced call's shortest form (<tool_call>, the name, the required
    // arguments, </tool_call>) takes kiln-tiny about 90 tokens, at about a
    // token a character: 160 leaves the grammar room to close it.
    maxTokens: Number(opt("--max-tokens", "160")),
    only: opt("--case", ""),
  };
  if (args.length > 0) usage(`unknown argument ${args[0]}`);
  if (!Number.isInteger(flags.maxTokens) || flags.maxTokens < 1) usage("--max-tokens must be a positive integer");
  return flags;
}

function usage(why) {
  console.error(`${scriptName()}: ${why} (flags: --url URL --model ID --token TOKEN --max-tokens N --case NAME)`);
  process.exit(2);
}

function scriptName() {
  return (process.argv[1] ?? "agents").split("/").pop().replace(/\.mjs$/, "");
}

// importOrExit imports an npm package, or ends the script with one line
// saying how to install it.
export async function importOrExit(name) {
  try {
    return await import(name);
  } catch (err) {
    if (err?.code === "ERR_MODULE_NOT_FOUND") {
      console.error(`${scriptName()}: the npm package ${name} is not installed: run scripts/install-e2e (or npm ci in examples/clients)`);
      process.exit(2);
    }
    throw err;
  }
}

// The get_weather tool's arguments. Free strings are bounded (maxLength):
// an untrained model never closes a string by itself, so only the grammar
// can end it.
export const Units = ["celsius", "fahrenheit"];
export const WeatherArgs = z.strictObject({
  city: z.string().max(16).describe("The city, e.g. Paris"),
  unit: z.enum(Units).describe("The temperature unit"),
});
export const weatherTool = {
  name: "get_weather",
  description: "Get the current weather in a city",
};

// weatherLoopOptions are the AI SDK generateText options of a two-step
// agent loop: step 1 must call get_weather, whose execute records its
// arguments in executed and returns a result the SDK sends back; step 2
// (tool choice none) answers in text. ai holds the AI SDK's tool and
// stepCountIs (this module does not import the SDK).
export function weatherLoopOptions({ tool, stepCountIs }, executed, maxTokens) {
  return {
    tools: {
      get_weather: tool({
        description: weatherTool.description,
        inputSchema: WeatherArgs,
        execute: async (args) => {
          executed.push(args);
          return { temperature: 21, unit: args.unit, sky: "sunny" };
        },
      }),
    },
    prompt: weatherPrompt,
    maxOutputTokens: maxTokens,
    stopWhen: stepCountIs(3),
    prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? "required" : "none" }),
  };
}

// Forecast is the nested document of the structured-output cases: an
// object with an enum and an array of objects with enums.
export const Skies = ["sunny", "cloudy", "rain", "snow"];
export const Days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
export const Forecast = z.strictObject({
  city: z.string().max(16),
  unit: z.enum(Units),
  days: z
    .array(z.strictObject({ day: z.enum(Days), sky: z.enum(Skies) }))
    .min(1)
    .max(2),
});

// jsonSchemaOf is the plain JSON Schema of a zod schema, as a client
// written without zod would send it (no $schema key).
export function jsonSchemaOf(schema) {
  const { $schema, ...rest } = z.toJSONSchema(schema);
  return rest;
}

export const weatherParameters = jsonSchemaOf(WeatherArgs);
export const forecastSchema = jsonSchemaOf(Forecast);

// The prompts. kiln-tiny cannot follow them; they are what an agent sends.
export const weatherPrompt = "What is the weather in Paris? Use the get_weather tool.";
export const forecastPrompt = "Give a two-day forecast for Oslo as JSON.";

// CaseFailure is a failed check: its message is the reason, values the key
// values (the arguments, the document) that show it.
export class CaseFailure extends Error {
  constructor(message, values = {}) {
    super(message);
    this.values = values;
  }
}

export function check(cond, message, values) {
  if (!cond) throw new CaseFailure(message, values);
}

// fits parses a value against a zod schema and returns the parsed value,
// or fails with every mismatch on one line.
export function fits(schema, value, what) {
  const r = schema.safeParse(value);
  if (!r.success) {
    throw new CaseFailure(`${what} do not fit the schema: ${zodIssues(r.error.issues)}`, { got: value });
  }
  return r.data;
}

function zodIssues(issues) {
  return issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
}

// parsedFits checks arguments or a document that may still be the raw
// text (an SDK that could not parse it hands that over): parsed, then
// fitted to the schema.
export function parsedFits(schema, value, what, finishReason) {
  const v = typeof value === "string" ? parseJSON(value, what, finishReason) : value;
  return fits(schema, v, what);
}

// parseJSON parses text the server constrained to JSON, or fails saying
// why (a finish_reason of length means the output was cut before it
// closed).
export function parseJSON(text, what, finishReason) {
  try {
    return JSON.parse(text);
  } catch (err) {
    const cut = finishReason === "length" ? ` (finish_reason length: cut at the token budget before the JSON closed)` : "";
    throw new CaseFailure(`${what} are not JSON${cut}: ${err.message}`, { text: clipText(text), finish_reason: finishReason });
  }
}

export function clipText(s, n = 200) {
  if (typeof s !== "string") return s;
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

// describeError turns what an SDK threw into the fields of a failed case:
// the reason on one line and, for an HTTP error, the status and the
// server's error message, param and code.
export function describeError(err, baseURL) {
  if (err instanceof CaseFailure) return { ...err.values, error: oneLine(err.message) };
  // A zod error from an SDK's own parser (LangChain's, openai's parse
  // helpers): the mismatches, as fits says them.
  if (Array.isArray(err?.issues) && /ZodError/.test(err?.name ?? "")) {
    return { error: `the output does not fit the schema: ${zodIssues(err.issues)}` };
  }
  if (err instanceof SyntaxError) return { error: `the output is not JSON: ${oneLine(err.message)}` };
  const out = {};
  const seen = new Set();
  for (let e = err; e && typeof e === "object" && !seen.has(e); e = e.cause ?? e.lastError ?? e.error) {
    seen.add(e);
    const status = e.status ?? e.statusCode;
    if (out.status === undefined && Number.isInteger(status)) out.status = status;
    const body = serverError(e);
    if (body && out.server_message === undefined) {
      out.server_message = body.message;
      if (body.param != null) out.param = body.param;
      if (body.code != null) out.code = body.code;
    }
    if (out.conn === undefined && typeof e.code === "string" && /^E[A-Z]+$/.test(e.code)) out.conn = e.code;
  }
  if (out.status !== undefined) {
    out.error = `HTTP ${out.status}: ${out.server_message ?? oneLine(err.message)}`;
  } else if (out.conn) {
    const why = out.conn === "ECONNREFUSED" ? "connection refused" : out.conn;
    out.error = `cannot reach ${baseURL}: ${why} (is kiln serve running there? see --url)`;
  } else {
    out.error = `${err?.name ?? "Error"}: ${oneLine(err?.message ?? String(err))}`;
  }
  // The AI SDK's NoObjectGeneratedError carries the text it could not
  // parse and why the generation stopped.
  if (typeof err?.text === "string") out.text = clipText(err.text);
  if (typeof err?.finishReason === "string") {
    out.finish_reason = err.finishReason;
    if (err.finishReason === "length") out.error += " (finish_reason length: cut at the token budget)";
  }
  return out;
}

// serverError finds the OpenAI error object ({message, param, code}) an
// SDK error carries: parsed (openai, LangChain) or as the raw body (the AI
// SDK).
function serverError(e) {
  if (e.error && typeof e.error === "object" && typeof e.error.message === "string") return e.error;
  if (typeof e.responseBody === "string") {
    try {
      const b = JSON.parse(e.responseBody);
      if (b?.error?.message) return b.error;
    } catch {
      // not JSON: the message says it
    }
  }
  return null;
}

function oneLine(s) {
  return clipText(String(s).replace(/\s+/g, " ").trim(), 300);
}

// Runner runs the cases one after another (the server is small) and
// reports them. Each case function returns the key values to print or
// throws; feature names what the server must support for it (chat, tools,
// tool_choice, tool_result, response_format, logprobs, n), so that a
// failure against a server without it says so.
export class Runner {
  constructor(script, flags) {
    this.script = script;
    this.flags = flags;
    this.cases = [];
  }

  async run(name, feature, fn) {
    if (this.flags.only && !name.includes(this.flags.only)) return;
    const start = Date.now();
    try {
      const values = (await fn()) ?? {};
      this.cases.push({ name, feature, pass: true, ms: Date.now() - start, ...values });
    } catch (err) {
      this.cases.push({ name, feature, pass: false, ms: Date.now() - start, ...describeError(err, this.flags.baseURL) });
    }
  }

  // finish prints the JSON line and exits: 0 when every case passed, 1
  // with one line naming the failed cases and why otherwise.
  finish() {
    const failed = this.cases.filter((c) => !c.pass);
    const report = {
      script: this.script,
      base_url: this.flags.baseURL,
      model: this.flags.model,
      passed: this.cases.length - failed.length,
      failed: failed.length,
      cases: this.cases,
    };
    console.log(JSON.stringify(report));
    if (this.cases.length === 0) {
      console.error(`${this.script}: no case matches --case ${this.flags.only}`);
      process.exit(2);
    }
    if (failed.length > 0) {
      const reasons = new Set(failed.map((c) => c.error));
      if (failed.length === this.cases.length && failed.length > 1 && reasons.size === 1) {
        console.error(`${this.script}: all ${failed.length} cases failed: ${failed[0].error}`);
        process.exit(1);
      }
      const why = failed.map((c) => `${c.name} [${c.feature}]: ${c.error}`).join("; ");
      console.error(`${this.script}: ${failed.length} of ${this.cases.length} cases failed: ${why}`);
      process.exit(1);
    }
    process.exit(0);
  }
}
