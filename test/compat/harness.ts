/**
 * The client compatibility suite's platform (docs/openai-compatible.md "Clients"): each client's
 * test file runs its published npm package against the embedded and the distributed platform,
 * both with the OpenAI stub as the only model provider (`stub/m`, priced so that cost shows and
 * taking images; `stub/t`, text only) and
 * CORS allowed for one origin. Per platform: an organization, an API key, and the prompts the
 * clients call: `free` (no variables), `greeting` (a required variable), `tool` (a Kiln tool of its
 * own), `schema` (a JSON-schema response format) and `textOnly` (on `stub/t`).
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { type OpenAIStub, startOpenAIStub } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { inject } from "vitest";
import { startDistributed } from "../support/distributed.js";
import { startEmbedded } from "../support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "../support/identity-flow.js";

export const ALLOWED_ORIGIN = "https://app.example.com";
/** Per million tokens, in USD: a 1M-token prompt and 0.5M-token answer cost 2 + 2 = 4. */
const PRICE = { inputPerMTokUsd: 2, outputPerMTokUsd: 4 };

export const SUMMARY_SCHEMA = {
  type: "object",
  properties: { summary: { type: "string" } },
  required: ["summary"],
  additionalProperties: false,
};

/**
 * What the provider receives, after the prompt's own system message, when a client sends back the
 * `lookup` call `call_1` ({city: "Oslo"}) of an earlier answer with its result `{"tempC":-3}`: the
 * same Chat Completions messages whichever API the client speaks.
 */
export const OSLO_ROUND_TRIP_SENT = [
  { role: "user", content: "Trip to Oslo" },
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"city":"Oslo"}' } }],
  },
  { role: "tool", tool_call_id: "call_1", content: '{"tempC":-3}' },
];

export interface CompatPrompt {
  id: string;
  name: string;
}

export interface CompatPlatform {
  mode: string;
  /** The gateway's base URL, e.g. http://127.0.0.1:4321 (clients take `${base}/v1`). */
  base: string;
  flow: FlowResult;
  stub: OpenAIStub;
  prompts: Record<"free" | "greeting" | "tool" | "schema" | "textOnly", CompatPrompt>;
  /** What the provider received last (the stub's request body). */
  lastSent(): // biome-ignore lint/suspicious/noExplicitAny: what the provider received is read loosely.
  any;
  /** The organization's stored runs with that status, newest first (GET /api/runs). */
  runs(status?: "succeeded" | "failed"): Promise<{ id: string; status: string; output?: unknown }[]>;
  /** A stored run by id (GET /api/runs/:id). */
  // biome-ignore lint/suspicious/noExplicitAny: run records are read loosely and asserted on.
  run(id: string): Promise<any>;
  stop(): Promise<void>;
}

const providersJson = (stub: OpenAIStub) =>
  JSON.stringify([
    {
      id: "stub",
      baseUrl: stub.baseUrl,
      models: [
        { model: "m", images: true, ...PRICE },
        { model: "t", ...PRICE },
      ],
    },
  ]);

async function startMode(mode: string, stub: OpenAIStub): Promise<{ base: string; stop(): Promise<void> }> {
  if (mode === "embedded") {
    const providers = loadProvidersConfig({
      OPENAI_COMPATIBLE_PROVIDERS: providersJson(stub),
      PROVIDER_MAX_RETRIES: "0",
    });
    const { kiln, baseUrl } = await startEmbedded({ providers, corsOrigins: [ALLOWED_ORIGIN] });
    return { base: baseUrl, stop: () => kiln.close() };
  }
  const kiln = await startDistributed({
    mongoUrl: inject("mongoUrl"),
    natsUrl: inject("natsUrl"),
    envOf: {
      execution: { OPENAI_COMPATIBLE_PROVIDERS: providersJson(stub), PROVIDER_MAX_RETRIES: "0" },
      gateway: { CORS_ORIGINS: ALLOWED_ORIGIN },
    },
  });
  return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
}

/** Both platforms, for `describe.each(COMPAT_MODES)`. */
export const COMPAT_MODES = ["embedded", "distributed"] as const;

export async function startCompatPlatform(mode: (typeof COMPAT_MODES)[number]): Promise<CompatPlatform> {
  const stub = await startOpenAIStub({});
  const running = await startMode(mode, stub).catch(async (e) => {
    await stub.close();
    throw e;
  });
  const { base } = running;
  const flow = await runIdentityFlow(base, ["prompts:read", "skills:read", "runs:write", "runs:read"]);
  const client = createTestClient(base);
  const { token, organizationId } = flow;
  const stamp = Date.now();
  const create = async (name: string, input: Parameters<typeof client.createPublishedPrompt>[2]) => {
    const p = await client.createPublishedPrompt(token, organizationId, { model: "stub/m", ...input }, { name });
    return { id: p.prompt.id, name };
  };
  const weather = await client.createTool(token, organizationId, {
    name: "Weather",
    config: { result: { temperatureC: 21 } },
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  });
  const prompts = {
    free: await create(`Helper ${stamp}`, { systemPrompt: "You are Kiln's helper." }),
    greeting: await create(`Greeting ${stamp}`, {
      systemPrompt: "Help {{person}}.",
      variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
    }),
    tool: await create(`Trips ${stamp}`, { systemPrompt: "Plan a trip.", tools: [weather.id] }),
    schema: await create(`Summary ${stamp}`, {
      systemPrompt: "Summarize.",
      responseFormat: { type: "json_schema", name: "summary", schema: SUMMARY_SCHEMA },
    }),
    textOnly: await create(`Text only ${stamp}`, { model: "stub/t", systemPrompt: "Describe." }),
  };
  return {
    mode,
    base,
    flow,
    stub,
    prompts,
    lastSent: () => stub.requests.at(-1)?.body,
    async runs(status) {
      const query = `organizationId=${organizationId}&kind=prompt&limit=100${status ? `&status=${status}` : ""}`;
      const res = await call(base, "GET", `/api/runs?${query}`, { token });
      if (res.status !== 200) throw new Error(`GET /api/runs answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.data;
    },
    async run(id) {
      const res = await call(base, "GET", `/api/runs/${id}`, { token });
      if (res.status !== 200)
        throw new Error(`GET /api/runs/${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async stop() {
      await running.stop();
      await stub.close();
    },
  };
}
