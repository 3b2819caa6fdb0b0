import { randomBytes } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type CallOptions,
  type Client,
  Code,
  ConnectError,
  createClient,
  createContextValues,
} from "@connectrpc/connect";
import { createInternalTokens } from "@kiln/kit/auth";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { notFound, permissionDenied } from "@kiln/kit/errors";
import { jsonText, jsonTextOf } from "@kiln/kit/json-text";
import { createLogger } from "@kiln/kit/logger";
import { kPrincipal, type Principal } from "@kiln/kit/principal";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { remoteErrorOf, toConnectError } from "@kiln/kit/rpc/errors";
import { createInProcessTransport } from "@kiln/kit/rpc/transport";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { type ModelProvider, type ModelRequest, type ModelResult, ProviderError } from "@kiln/models/provider";
import {
  type CatalogService,
  type ResolvedPromptSchema,
  type ResolvePromptVersionRequest,
  ResolvePromptVersionResponseSchema,
  type ResolveSkillVersionRequest,
  ResolveSkillVersionResponseSchema,
} from "@kiln/proto/catalog";
import { ExecutionService } from "@kiln/proto/execution";
import { AuthorizeResponseSchema } from "@kiln/proto/identity";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RUNS_STREAM } from "../events/run-events.js";
import { createExecutionService } from "../service.js";

/**
 * The execution service's RPC surface (what the gateway calls), in process with its real
 * interceptors (authentication, errors, idempotency) and serialization; the catalog and identity
 * are fakes, the model a scripted provider.
 */

const ORG = "org_rpc";
const alice: Principal = { type: "user", id: "usr_alice" };
const logger = createLogger({ name: "test", level: "silent" });

const identity: IdentityAuth = {
  async verifyApiKey() {
    throw new Error("not used");
  },
  async authorize(principal, input) {
    if (principal.type === "api_key") {
      if (principal.organizationId !== input.organizationId) throw permissionDenied("another organization");
      if (input.scope && !principal.scopes.includes(input.scope)) throw permissionDenied(`lacks ${input.scope}`);
    } else if (principal.type === "user" && input.organizationId !== ORG) throw notFound("organization");
    return create(AuthorizeResponseSchema, {});
  },
};

const prompt: MessageInitShape<typeof ResolvedPromptSchema> = {
  promptName: "Weather",
  version: {
    id: "pv_rpc",
    promptId: "prm_rpc",
    organizationId: ORG,
    version: 1,
    status: "published",
    content: {
      systemPrompt: "Weather in {{city}}",
      variablesSchema: {
        json: JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
      },
      responseFormat: { json: '{"type":"text"}' },
      model: "fake/model",
    },
    tools: [{ toolId: "tool_w", toolVersionId: "tv_w", toolKey: "weather" }],
  },
  tools: [
    {
      toolId: "tool_w",
      toolVersionId: "tv_w",
      toolKey: "weather",
      description: "weather",
      content: {
        type: "manual_stub",
        config: { json: '{"result":{"c":21}}' },
        inputSchema: { json: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}' },
      },
    },
  ],
};

const catalog = {
  async resolvePromptVersion(req: ResolvePromptVersionRequest) {
    if (req.promptId !== "prm_rpc" || req.organizationId !== ORG) throw toConnectError(notFound("prompt"));
    return create(ResolvePromptVersionResponseSchema, { prompt });
  },
  async resolveSkillVersion(req: ResolveSkillVersionRequest) {
    if (req.skillId !== "skl_rpc" || req.organizationId !== ORG) throw toConnectError(notFound("skill"));
    return create(ResolveSkillVersionResponseSchema, {
      version: {
        id: "sv_rpc",
        skillId: "skl_rpc",
        organizationId: ORG,
        version: 1,
        status: req.preferDraft ? "draft" : "published",
        content: { inputSchema: { json: '{"type":"object"}' }, outputSchema: { json: '{"type":"string"}' } },
      },
      steps: [
        {
          step: { order: 1, alias: "only", promptId: "prm_rpc", promptVersionId: "pv_rpc", variables: { json: "{}" } },
          prompt,
        },
      ],
    });
  },
} as unknown as Client<typeof CatalogService>;

type Scripted = Partial<ModelResult> | Error;
const script: Scripted[] = [];
const requests: ModelRequest[] = [];
const fakeProvider: ModelProvider = {
  id: "fake",
  async generate(request) {
    requests.push(request);
    const next = script.shift() ?? { text: "fine" };
    if (next instanceof Error) throw next;
    return {
      text: "",
      toolCalls: [],
      usage: { inputTokens: 4, outputTokens: 2 },
      finishReason: "stop",
      provider: "fake",
      model: request.model,
      retries: 0,
      ...next,
    };
  },
};

let service: Awaited<ReturnType<typeof createExecutionService>>;
let client: Client<typeof ExecutionService>;
const bus = createMemoryBus();
const store = createMemoryStore();

beforeAll(async () => {
  const tokens = createInternalTokens(randomBytes(32).toString("base64url"));
  service = await createExecutionService({
    logger,
    store,
    bus,
    tokens,
    identityAuth: identity,
    catalog,
    providers: { openai: {}, compatible: [], defaultModel: "local/echo", timeoutMs: 1_000, maxRetries: 0 },
    providerOptions: {
      providers: [fakeProvider],
      models: [
        {
          id: "fake/model",
          provider: "fake",
          model: "model",
          capabilities: { tools: true, jsonSchema: true, input: ["text"] },
          pricing: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 },
        },
      ],
    },
    tools: { allowlist: { hosts: [] }, allowPrivateFor: [], maxToolRounds: 2 },
    outboxIntervalMs: 60_000,
  });
  await bus.ensureConsumer({ stream: RUNS_STREAM.name, durable: "observer", filterSubject: "runs.>" });
  client = createClient(
    ExecutionService,
    createInProcessTransport(service, [createForwardInterceptor(tokens, { type: "service", id: "gateway" })]),
  );
});

afterAll(async () => {
  await service?.close();
  await bus.close();
  await store.close();
});

beforeEach(() => {
  script.length = 0;
  requests.length = 0;
});

const as = (principal: Principal, extra: Partial<CallOptions> = {}): CallOptions => ({
  contextValues: createContextValues().set(kPrincipal, principal),
  ...extra,
});

async function rpcError(promise: Promise<unknown>): Promise<ConnectError> {
  const error = await promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

/** Messages in RUNS once the events of the runs stored so far (published in the background) are out. */
const streamed = async () => {
  await service.settle();
  return (await bus.streamInfo(RUNS_STREAM.name)).messages;
};

const runRequest = (variables: unknown) => ({
  organizationId: ORG,
  promptId: "prm_rpc",
  variables: jsonText(variables),
  versionId: "",
  model: "",
});

describe("ExecutionService over Connect", () => {
  it("lists the models with availability and prices", async () => {
    const { models } = await client.listModels({}, as(alice));
    const byId = new Map(models.map((m) => [m.id, m]));
    expect(byId.get("local/echo")).toMatchObject({ available: true, pricing: { inputPerMtokUsd: 0 } });
    expect(byId.get("openai/gpt-4o-mini")).toMatchObject({
      available: false,
      pricing: { inputPerMtokUsd: 0.15, outputPerMtokUsd: 0.6 },
    });
    expect(byId.get("fake/model")).toMatchObject({ available: true, provider: "fake", model: "model" });
  });

  it("runs a prompt and answers the stored run, which GetRun reads back identically", async () => {
    script.push({ toolCalls: [{ id: "c1", name: "weather", input: { city: "Paris" } }] }, { text: "21 degrees" });
    const { run } = await client.runPrompt(runRequest({ city: "Paris" }), as(alice));
    expect(run).toMatchObject({
      id: expect.stringMatching(/^run_/),
      kind: "prompt",
      organizationId: ORG,
      status: "succeeded",
      input: jsonTextOf('{"variables":{"city":"Paris"}}'),
      output: jsonTextOf('{"text":"21 degrees"}'),
      provider: "fake",
      model: "fake/model",
      usage: { inputTokens: 8n, outputTokens: 4n },
      toolCallCount: 1n,
      toolCallCounts: { weather: 1n },
      promptId: "prm_rpc",
      promptVersionId: "pv_rpc",
      preview: false,
      steps: [],
    });
    expect(run?.estimatedCostUsd).toBeCloseTo((8 * 1 + 4 * 2) / 1e6, 12);
    expect(run?.toolCalls).toMatchObject([
      {
        toolKey: "weather",
        toolVersionId: "tv_w",
        input: jsonTextOf('{"city":"Paris"}'),
        output: jsonTextOf('{"c":21}'),
      },
    ]);
    expect(run?.error).toBeUndefined();
    const read = await client.getRun({ id: run?.id ?? "", kind: "prompt" }, as(alice));
    expect(read.run).toEqual(run);
  });

  it("answers a provider failure as a stored failed run, not as an RPC error", async () => {
    script.push(new ProviderError("provider_error", "upstream 500", { provider: "fake", model: "model", status: 500 }));
    const before = await streamed();
    const { run } = await client.runPrompt(runRequest({ city: "Paris" }), as(alice));
    expect(run).toMatchObject({ status: "failed", error: { code: "provider_error", message: "upstream 500" } });
    expect(run?.output).toBeUndefined();
    expect((await client.getRun({ id: run?.id ?? "", kind: "" }, as(alice))).run?.status).toBe("failed");
    expect(await streamed()).toBe(before + 1);
  });

  it("refuses bad variables with invalid_argument and the field in the error detail", async () => {
    const error = await rpcError(client.runPrompt(runRequest({ city: 1 }), as(alice)));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(remoteErrorOf(error)).toMatchObject({
      kind: "invalid_argument",
      details: [{ field: "variables.city", issue: expect.any(String) }],
    });
  });

  it.each([
    ["provider_error", Code.Unknown],
    ["provider_timeout", Code.DeadlineExceeded],
  ] as const)("fails a preview whose model failed with %s, storing nothing", async (kind, code) => {
    script.push(new ProviderError(kind, `the model failed: ${kind}`, { provider: "fake", model: "model" }));
    const before = await streamed();
    const error = await rpcError(
      client.previewSkill(
        { organizationId: ORG, skillId: "skl_rpc", input: jsonTextOf('{"city":"Paris"}') },
        as(alice),
      ),
    );
    expect(error.code).toBe(code);
    expect(remoteErrorOf(error)).toMatchObject({ kind, message: `the model failed: ${kind}` });
    expect(await streamed()).toBe(before);
  });

  it("answers a preview with preview set, no id, and stores nothing", async () => {
    const before = await streamed();
    const { run } = await client.previewSkill(
      { organizationId: ORG, skillId: "skl_rpc", input: jsonTextOf('{"city":"Paris"}') },
      as(alice),
    );
    expect(run).toMatchObject({ id: "", preview: true, kind: "skill", status: "succeeded", skillVersionId: "sv_rpc" });
    expect(run?.steps.map((s) => [s.stepId, s.status])).toEqual([["only", "succeeded"]]);
    expect(await streamed()).toBe(before);
  });

  it("replays RunPrompt and RunSkill for the same Idempotency-Key, and refuses the key with another request", async () => {
    const replayed: boolean[] = [];
    const options = (key: string) =>
      as(alice, {
        headers: { "idempotency-key": key },
        onHeader: (h) => replayed.push(h.get("idempotent-replayed") === "true"),
      });
    const first = await client.runPrompt(runRequest({ city: "Paris" }), options("k-prompt"));
    const again = await client.runPrompt(runRequest({ city: "Paris" }), options("k-prompt"));
    expect(again.run?.id).toBe(first.run?.id);
    expect(requests).toHaveLength(1);
    const other = await rpcError(client.runPrompt(runRequest({ city: "Lyon" }), options("k-prompt")));
    expect(other.code).toBe(Code.InvalidArgument);

    const skill = { organizationId: ORG, skillId: "skl_rpc", input: jsonTextOf('{"city":"Paris"}') };
    const s1 = await client.runSkill(skill, options("k-skill"));
    const s2 = await client.runSkill(skill, options("k-skill"));
    expect(s2.run?.id).toBe(s1.run?.id);
    expect(replayed).toEqual([false, true, false, true]);
  });

  it("stores the evaluation run the evaluation service names on a skill run, and refuses anyone else naming one", async () => {
    const evaluation: Principal = { type: "service", id: "evaluation", organizationId: ORG };
    const skill = { organizationId: ORG, skillId: "skl_rpc", input: jsonTextOf('{"city":"Paris"}') };
    const { run } = await client.runSkill({ ...skill, evaluationRunId: "evr_1" }, as(evaluation));
    expect(run).toMatchObject({ kind: "skill", status: "succeeded", evaluationRunId: "evr_1" });
    expect((await client.getRun({ id: run?.id ?? "", kind: "skill" }, as(alice))).run?.evaluationRunId).toBe("evr_1");
    // A run nobody made for an evaluation says none.
    expect((await client.runSkill(skill, as(alice))).run?.evaluationRunId).toBe("");
    const before = await streamed();
    const forged = await rpcError(client.runSkill({ ...skill, evaluationRunId: "evr_1" }, as(alice)));
    expect(forged.code).toBe(Code.PermissionDenied);
    expect(await streamed()).toBe(before);
  });

  it("ignores Idempotency-Key on previews: each one runs", async () => {
    const options = as(alice, { headers: { "idempotency-key": "k-preview" } });
    const input = { organizationId: ORG, skillId: "skl_rpc", input: jsonTextOf('{"city":"Paris"}') };
    await client.previewSkill(input, options);
    await client.previewSkill({ ...input, input: jsonTextOf('{"city":"Lyon"}') }, options);
    expect(requests).toHaveLength(2);
  });

  it("does not find unknown runs, runs of another kind, or runs of another organization's key", async () => {
    const { run } = await client.runPrompt(runRequest({ city: "Oslo" }), as(alice));
    const id = run?.id ?? "";
    expect((await rpcError(client.getRun({ id: "run_missing", kind: "" }, as(alice)))).code).toBe(Code.NotFound);
    expect((await rpcError(client.getRun({ id, kind: "skill" }, as(alice)))).code).toBe(Code.NotFound);
    const otherKey: Principal = { type: "api_key", id: "key_x", organizationId: "org_other", scopes: ["runs:read"] };
    expect((await rpcError(client.getRun({ id, kind: "" }, as(otherKey)))).code).toBe(Code.NotFound);
    const noScope: Principal = { type: "api_key", id: "key_y", organizationId: ORG, scopes: ["runs:write"] };
    expect((await rpcError(client.getRun({ id, kind: "" }, as(noScope)))).code).toBe(Code.PermissionDenied);
  });
});
