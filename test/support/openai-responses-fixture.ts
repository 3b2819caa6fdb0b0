/**
 * The platform the Responses API tests call (test/openai-responses*.test.ts), in embedded or
 * distributed mode, with the OpenAI stub as its one model (`stub/m`, priced so that runs have a
 * cost): a fresh organization with an API key, a prompt with variables and its own system and
 * developer prompts, and a skill composed of it.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { type OpenAIStub, startOpenAIStub } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { startDistributed } from "./distributed.js";
import { startEmbedded } from "./embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./identity-flow.js";

export interface ResponsesPlatform {
  base: string;
  stub: OpenAIStub;
  flow: FlowResult;
  /** "Help {{person}}." with the developer prompt "Be brief.". */
  prompt: { id: string; name: string };
  skill: { id: string; name: string };
  /** The last request the provider received. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary fields of what was sent.
  lastSent(): any;
  /** A stored run, read back through the runs API. */
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on the run record.
  storedRun(id: string): Promise<any>;
  /** How many runs of the organization are stored as failed. */
  failedRuns(): Promise<number>;
  stop(): Promise<void>;
}

export const responsesModes = [{ name: "embedded mode" }, { name: "distributed mode (FerretDB, NATS)" }] as const;

const providersOf = (stub: OpenAIStub) =>
  JSON.stringify([
    { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m", inputPerMTokUsd: 2, outputPerMTokUsd: 4 }] },
  ]);

export async function startResponsesPlatform(
  mode: (typeof responsesModes)[number]["name"],
  servers: { mongoUrl: string; natsUrl: string },
): Promise<ResponsesPlatform> {
  const stub = await startOpenAIStub({});
  const env = { OPENAI_COMPATIBLE_PROVIDERS: providersOf(stub), PROVIDER_MAX_RETRIES: "0" };
  let base: string;
  let close: () => Promise<void>;
  if (mode === "embedded mode") {
    const started = await startEmbedded({ providers: loadProvidersConfig(env) });
    base = started.baseUrl;
    close = () => started.kiln.close();
  } else {
    const started = await startDistributed({ ...servers, envOf: { execution: env } });
    base = started.gatewayUrl;
    close = () => started.stop();
  }
  const flow = await runIdentityFlow(base, ["prompts:read", "skills:read", "runs:write", "runs:read"]);
  const client = createTestClient(base);
  const name = `Helper ${Date.now()}`;
  const p = await client.createPublishedPrompt(
    flow.token,
    flow.organizationId,
    {
      model: "stub/m",
      systemPrompt: "Help {{person}}.",
      developerPrompt: "Be brief.",
      variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
    },
    { name },
  );
  const s = await client.createSkill(flow.token, flow.organizationId, { name: `Helping ${Date.now()}` });
  await client.replaceSkillPrompts(flow.token, s.draftVersionId ?? "", [{ promptId: p.prompt.id, alias: "help" }]);
  await client.publishSkill(flow.token, s.id);
  return {
    base,
    stub,
    flow,
    prompt: { id: p.prompt.id, name },
    skill: { id: s.id, name: s.name },
    lastSent: () => stub.requests.at(-1)?.body,
    async storedRun(id) {
      const read = await call(base, "GET", `/api/runs/${id}`, { token: flow.token });
      if (read.status !== 200) throw new Error(`GET /api/runs/${id}: ${read.status}`);
      return read.body;
    },
    async failedRuns() {
      const list = await call(base, "GET", `/api/runs?organizationId=${flow.organizationId}&status=failed&limit=100`, {
        token: flow.token,
      });
      return (list.body as { data: unknown[] }).data.length;
    },
    async stop() {
      await close();
      await stub.close();
    },
  };
}
