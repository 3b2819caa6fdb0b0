import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { CallOptions, Client } from "@connectrpc/connect";
import type { AuthorizeInput, IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { DomainError, notFound, permissionDenied } from "@kiln/kit/errors";
import { jsonText, jsonTextOf } from "@kiln/kit/json-text";
import { createLogger } from "@kiln/kit/logger";
import { kPrincipal, kRequestId, type Principal } from "@kiln/kit/principal";
import { toConnectError } from "@kiln/kit/rpc/errors";
import { createMemoryStore } from "@kiln/kit/store/memory";
import type { ModelEntry } from "@kiln/models/catalog";
import {
  type ModelProvider,
  type ModelRequest,
  type ModelResult,
  ProviderError,
  type ProviderErrorKind,
} from "@kiln/models/provider";
import { createProviderRegistry, type ProvidersConfig } from "@kiln/models/registry";
import {
  type CatalogService,
  type ResolvedPromptSchema,
  type ResolvedToolSchema,
  type ResolvePromptVersionRequest,
  ResolvePromptVersionResponseSchema,
  type ResolveSkillVersionRequest,
  ResolveSkillVersionResponseSchema,
} from "@kiln/proto/catalog";
import { AuthorizeResponseSchema } from "@kiln/proto/identity";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptRunFixture } from "../../test/prompt-run-fixture.js";
import { createRunEventOutbox, RUNS_STREAM, runEventIntentCollection } from "../events/run-events.js";
import { runToProto } from "../rpc/run-proto.js";
import { runCollection } from "../store/run-store.js";
import { createInputValidator } from "../tools/input-validator.js";
import { createToolExecutor } from "../tools/tool-executor.js";
import type { CallContext } from "./call-context.js";
import { createRunner } from "./runner.js";

/**
 * The run use cases (api.md "Prompts" run rules, "Skills", "Runs", "Events") against a fake catalog,
 * a fake identity, scripted model providers, an in-memory store and an in-memory bus.
 */

const ORG_A = "org_a";
const ORG_B = "org_b";
const alice: Principal = { type: "user", id: "usr_alice" };
const mallory: Principal = { type: "user", id: "usr_mallory" };
const keyA = (scopes: string[]): Principal => ({ type: "api_key", id: "key_a", organizationId: ORG_A, scopes });
const keyB = (scopes: string[]): Principal => ({ type: "api_key", id: "key_b", organizationId: ORG_B, scopes });
const ctxOf = (principal: Principal): CallContext => ({ principal, requestId: "req_test" });
const asAlice = ctxOf(alice);

const logger = createLogger({ name: "test", level: "silent" });

// ---------------------------------------------------------------------------------------------------------------
// Fakes

/** Identity as identity.ts decides: members by user id; a key acts in its own organization with its scopes. */
function fakeIdentity(members: Record<string, string[]>) {
  const calls: { principal: Principal; input: AuthorizeInput }[] = [];
  const auth: IdentityAuth = {
    async verifyApiKey() {
      throw new Error("not used");
    },
    async authorize(principal, input) {
      calls.push({ principal, input });
      if (principal.type === "user") {
        if (!members[input.organizationId]?.includes(principal.id)) throw notFound("organization");
      } else if (principal.type === "api_key") {
        if (principal.organizationId !== input.organizationId) {
          throw permissionDenied("this API key belongs to another organization");
        }
        if (input.scope && !principal.scopes.includes(input.scope)) {
          throw permissionDenied(`this API key lacks the scope ${input.scope}`);
        }
      }
      return create(AuthorizeResponseSchema, {});
    },
  };
  return { auth, calls };
}

type ResolvedPromptInit = MessageInitShape<typeof ResolvedPromptSchema>;
type ResolvedToolInit = MessageInitShape<typeof ResolvedToolSchema>;

interface SkillFixture {
  id: string;
  versionId: string;
  organizationId: string;
  inputSchema?: unknown;
  steps: { alias: string; variables?: Record<string, unknown>; prompt: ResolvedPromptInit }[];
  tools?: ResolvedToolInit[];
}

/** The catalog's two resolve RPCs, answering proto-shaped messages like catalog-rpc.ts does. */
function fakeCatalog() {
  const prompts = new Map<string, ResolvedPromptInit>();
  const skills = new Map<string, SkillFixture>();
  const calls: { method: string; req: unknown; principal: Principal | undefined; requestId: string | undefined }[] = [];
  const record = (method: string, req: unknown, options?: CallOptions) =>
    calls.push({
      method,
      req,
      principal: options?.contextValues?.get(kPrincipal),
      requestId: options?.contextValues?.get(kRequestId),
    });
  const client = {
    async resolvePromptVersion(req: ResolvePromptVersionRequest, options?: CallOptions) {
      record("resolvePromptVersion", req, options);
      const prompt = prompts.get(req.promptId);
      if (!prompt || prompt.version?.organizationId !== req.organizationId) throw toConnectError(notFound("prompt"));
      if (req.versionId && req.versionId !== prompt.version?.id) throw toConnectError(notFound("prompt version"));
      return create(ResolvePromptVersionResponseSchema, { prompt });
    },
    async resolveSkillVersion(req: ResolveSkillVersionRequest, options?: CallOptions) {
      record("resolveSkillVersion", req, options);
      const skill = skills.get(req.skillId);
      if (!skill || skill.organizationId !== req.organizationId) throw toConnectError(notFound("skill"));
      return create(ResolveSkillVersionResponseSchema, {
        version: {
          id: skill.versionId,
          skillId: skill.id,
          organizationId: skill.organizationId,
          version: 1,
          status: "published",
          content: {
            inputSchema: { json: JSON.stringify(skill.inputSchema ?? { type: "object" }) },
            outputSchema: { json: '{"type":"string"}' },
          },
        },
        steps: skill.steps.map((s, i) => ({
          step: {
            order: i + 1,
            alias: s.alias,
            promptId: s.prompt.version?.promptId,
            promptVersionId: s.prompt.version?.id,
            promptName: s.prompt.promptName,
            version: 1,
            variables: { json: JSON.stringify(s.variables ?? {}) },
          },
          prompt: s.prompt,
        })),
        tools: skill.tools ?? [],
      });
    },
  };
  return { client: client as unknown as Client<typeof CatalogService>, prompts, skills, calls };
}

let promptCounter = 0;

/** A resolved prompt version (defaults: text answers, `{type: "object"}` variables, no model, no tools). */
function promptOf(
  fields: {
    systemPrompt?: string;
    developerPrompt?: string;
    variablesSchema?: unknown;
    responseFormat?: unknown;
    temperature?: number;
    maxOutputTokens?: number;
    model?: string;
    tools?: ResolvedToolInit[];
    organizationId?: string;
  } = {},
): ResolvedPromptInit {
  const n = ++promptCounter;
  return {
    promptName: `Prompt ${n}`,
    version: {
      id: `pv_${n}`,
      promptId: `prm_${n}`,
      organizationId: fields.organizationId ?? ORG_A,
      version: 1,
      status: "published",
      content: {
        systemPrompt: fields.systemPrompt ?? "Answer.",
        developerPrompt: fields.developerPrompt,
        variablesSchema: { json: JSON.stringify(fields.variablesSchema ?? { type: "object" }) },
        responseFormat: { json: JSON.stringify(fields.responseFormat ?? { type: "text" }) },
        temperature: fields.temperature,
        maxOutputTokens: fields.maxOutputTokens,
        model: fields.model,
      },
      tools: (fields.tools ?? []).map((t) => ({
        toolId: t.toolId,
        toolVersionId: t.toolVersionId,
        toolKey: t.toolKey,
      })),
    },
    tools: fields.tools ?? [],
  };
}

function stubTool(toolKey: string, result: unknown, inputSchema: unknown = CITY_INPUT): ResolvedToolInit {
  return {
    toolId: `tool_${toolKey}`,
    toolVersionId: `tv_${toolKey}`,
    toolKey,
    description: `The ${toolKey} tool`,
    content: {
      type: "manual_stub",
      config: { json: JSON.stringify({ result }) },
      inputSchema: { json: JSON.stringify(inputSchema) },
    },
  };
}

const CITY_INPUT = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false,
};
const CITY_VARIABLES = {
  type: "object",
  properties: { city: { type: "string", minLength: 1 } },
  required: ["city"],
};

type Answer = Partial<Omit<ModelResult, "provider" | "model" | "retries">>;
type Scripted = Answer | Error | ((request: ModelRequest) => Answer | Promise<Answer>);

/** A provider whose answers are scripted; once the script is empty it answers `fallback`. */
function scriptedProvider(id: string) {
  const requests: ModelRequest[] = [];
  const script: Scripted[] = [];
  let fallback: Scripted = { text: "ok" };
  const provider: ModelProvider = {
    id,
    async generate(request) {
      // The executor keeps appending to its messages: keep what this turn saw.
      requests.push({ ...request, messages: [...request.messages] });
      const next = script.shift() ?? fallback;
      if (next instanceof Error) throw next;
      const answer = typeof next === "function" ? await next(request) : next;
      const toolCalls = answer.toolCalls ?? [];
      return {
        text: answer.text ?? "",
        ...(answer.json !== undefined ? { json: answer.json } : {}),
        toolCalls,
        usage: answer.usage ?? { inputTokens: 10, outputTokens: 5 },
        finishReason: answer.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
        provider: id,
        model: request.model,
        retries: 0,
      };
    },
  };
  return {
    provider,
    requests,
    script: (...answers: Scripted[]) => script.push(...answers),
    setFallback(answer: Scripted) {
      fallback = answer;
    },
  };
}

const providerFailure = (kind: ProviderErrorKind, message = `fake ${kind}`) =>
  new ProviderError(kind, message, { provider: "fake", model: "default", status: 500, retries: 2 });

const fakeModel = (model: string, input: number | null, output: number | null): ModelEntry => ({
  id: `fake/${model}`,
  provider: "fake",
  model,
  capabilities: { tools: true, jsonSchema: true, input: ["text"] },
  pricing: { inputPerMTokUsd: input, outputPerMTokUsd: output },
});

const FAKE_MODELS = [
  fakeModel("default", 1, 2),
  fakeModel("version", 3, 4),
  fakeModel("request", 5, 6),
  fakeModel("unpriced", null, null),
];

/** A bus whose publishes fail while `down` is set; successful publishes are recorded. */
function flakyBus(bus: Bus) {
  const state = { down: false, published: [] as { subject: string; payload: string; msgId?: string }[] };
  const wrapped: Bus = {
    ...bus,
    async publish(subject, payload, options) {
      if (state.down) throw new Error("bus unavailable");
      const ack = await bus.publish(subject, payload, options);
      state.published.push({ subject, payload: String(payload), msgId: options?.msgId });
      return ack;
    },
  };
  return { bus: wrapped, state };
}

// ---------------------------------------------------------------------------------------------------------------
// The runner under test

async function setup(options: { maxToolRounds?: number; defaultModel?: string } = {}) {
  const store = createMemoryStore();
  const runs = runCollection(store);
  const memoryBus = createMemoryBus();
  await memoryBus.ensureStream(RUNS_STREAM);
  // A consumer that never consumes: the interest stream keeps every message for it.
  await memoryBus.ensureConsumer({ stream: RUNS_STREAM.name, durable: "observer", filterSubject: "runs.>" });
  const { bus, state } = flakyBus(memoryBus);
  const intents = runEventIntentCollection(store);
  // The relay takes over any pending event at once here; in a service it waits relayAfterMs.
  const outbox = createRunEventOutbox(runs, intents, bus, logger, { relayAfterMs: 0 });
  const fake = scriptedProvider("fake");
  const config: ProvidersConfig = {
    openai: {},
    compatible: [],
    defaultModel: options.defaultModel ?? "fake/default",
    timeoutMs: 1_000,
    maxRetries: 0,
  };
  const models = createProviderRegistry(config, { providers: [fake.provider], models: FAKE_MODELS });
  const catalog = fakeCatalog();
  const identity = fakeIdentity({ [ORG_A]: [alice.id], [ORG_B]: [mallory.id] });
  const runner = createRunner({
    runs,
    outbox,
    catalog: catalog.client,
    identityAuth: identity.auth,
    models,
    tools: createToolExecutor({ allowlist: { hosts: [] } }),
    validator: createInputValidator(),
    maxToolRounds: options.maxToolRounds ?? 3,
  });
  return {
    runner,
    runs,
    intents,
    store,
    outbox,
    fake,
    catalog,
    identity,
    bus: state,
    /** Messages the RUNS stream holds (nothing consumes them). */
    streamed: async () => {
      await outbox.settled();
      return (await memoryBus.streamInfo(RUNS_STREAM.name)).messages;
    },
    /** What reached the bus, once the background publishing of runs stored so far is done. */
    events: async () => {
      await outbox.settled();
      return state.published.map((p) => ({ ...p, body: JSON.parse(p.payload) as Record<string, unknown> }));
    },
    async close() {
      await outbox.stop();
      await memoryBus.close();
      await store.close();
    },
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** The rejection of `promise` (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

const parse = (text: string | null) => (text === null ? null : JSON.parse(text));

let t: Setup;

beforeEach(async () => {
  t = await setup();
});

afterEach(async () => {
  await t.close();
});

function addPrompt(fields: Parameters<typeof promptOf>[0] = {}) {
  const prompt = promptOf(fields);
  t.catalog.prompts.set(prompt.version?.promptId ?? "", prompt);
  return { promptId: prompt.version?.promptId ?? "", versionId: prompt.version?.id ?? "" };
}

const runPrompt = (
  promptId: string,
  variables: unknown,
  extra: {
    versionId?: string;
    model?: string;
    organizationId?: string;
    messages?: { role: string; content: string }[];
  } = {},
  ctx: CallContext = asAlice,
) =>
  t.runner.runPrompt(
    {
      organizationId: extra.organizationId ?? ORG_A,
      promptId,
      variables: jsonText(variables),
      versionId: extra.versionId ?? "",
      model: extra.model ?? "",
      messages: extra.messages,
    },
    ctx,
  );

async function expectNothingStored() {
  await t.outbox.settled();
  expect(await t.runs.countDocuments({})).toBe(0);
  expect(await t.intents.countDocuments({})).toBe(0);
  expect(t.bus.published).toEqual([]);
  expect(await t.streamed()).toBe(0);
}

// ---------------------------------------------------------------------------------------------------------------

describe("runPrompt", () => {
  it("runs the version, stores the run and publishes one run.completed event", async () => {
    const { promptId, versionId } = addPrompt({
      systemPrompt: "Weather for {{city}}.",
      developerPrompt: "Be brief about {{city}}.",
      variablesSchema: CITY_VARIABLES,
      temperature: 0.3,
      maxOutputTokens: 200,
    });
    t.fake.script({ text: "Sunny in Paris", usage: { inputTokens: 1_000, outputTokens: 500 } });

    const run = await runPrompt(promptId, { city: "Paris" });

    expect(run).toMatchObject({
      _id: expect.stringMatching(/^run_[0-9a-f]{32}$/),
      kind: "prompt",
      organizationId: ORG_A,
      status: "succeeded",
      inputJson: '{"variables":{"city":"Paris"}}',
      outputJson: '{"text":"Sunny in Paris"}',
      provider: "fake",
      model: "fake/default",
      usage: { inputTokens: 1_000, outputTokens: 500 },
      toolCallCount: 0,
      toolCallCounts: [],
      toolCallsJson: "[]",
      stepsJson: "[]",
      error: null,
      promptId,
      promptVersionId: versionId,
      skillId: "",
      skillVersionId: "",
    });
    // 1000 tokens at $1/M in, 500 at $2/M out.
    expect(run.estimatedCostUsd).toBeCloseTo(0.002, 12);
    expect(run.completedAt.getTime()).toBeGreaterThanOrEqual(run.createdAt.getTime());
    expect(run.latencyMs).toBe(run.completedAt.getTime() - run.createdAt.getTime());

    // What the model was asked.
    expect(t.fake.requests).toHaveLength(1);
    expect(t.fake.requests[0]).toMatchObject({
      model: "default",
      messages: [
        { role: "system", content: "Weather for Paris." },
        { role: "developer", content: "Be brief about Paris." },
      ],
      tools: undefined,
      responseFormat: { type: "text" },
      temperature: 0.3,
      maxOutputTokens: 200,
      variables: { city: "Paris" },
    });

    // Who asked: identity with runs:write in the run's organization; the catalog with the caller's principal.
    expect(t.identity.calls).toEqual([
      { principal: alice, input: { organizationId: ORG_A, requireAi: true, scope: "runs:write" } },
    ]);
    expect(t.catalog.calls).toEqual([
      {
        method: "resolvePromptVersion",
        req: expect.objectContaining({ organizationId: ORG_A, promptId, versionId: "" }),
        principal: alice,
        requestId: "req_test",
      },
    ]);

    // Stored, and published once through the outbox.
    const stored = await t.runs.findOne({ _id: run._id });
    expect(stored).toEqual(run);
    expect(await t.events()).toEqual([
      {
        subject: "runs.completed.prompt",
        msgId: run._id,
        payload: expect.any(String),
        body: expect.objectContaining({
          runId: run._id,
          kind: "prompt",
          organizationId: ORG_A,
          status: "succeeded",
          provider: "fake",
          model: "fake/default",
          promptId,
          promptVersionId: versionId,
        }),
      },
    ]);
    expect(await t.streamed()).toBe(1);
  });

  it("runs the version named by versionId", async () => {
    const { promptId, versionId } = addPrompt();
    const run = await runPrompt(promptId, {}, { versionId });
    expect(run.promptVersionId).toBe(versionId);
    expect(t.catalog.calls[0]?.req).toMatchObject({ versionId });
  });

  it("renders templates without HTML escaping, other values as JSON", async () => {
    const { promptId } = addPrompt({
      systemPrompt: "<b>{{name}}</b> & {{n}} {{flag}} {{obj}} {{list}} [{{absent}}]",
      variablesSchema: {
        type: "object",
        properties: { name: {}, n: {}, flag: {}, obj: {}, list: {}, absent: {} },
      },
    });
    await runPrompt(promptId, { name: `Tom & "Jerry" <3`, n: 4.5, flag: true, obj: { a: 1 }, list: [1, "x"] });
    expect(t.fake.requests[0]?.messages[0]?.content).toBe(`<b>Tom & "Jerry" <3</b> & 4.5 true {"a":1} [1,"x"] []`);
  });

  it("renders sections over lists and objects", async () => {
    const { promptId } = addPrompt({
      systemPrompt: "{{#people}}{{name}}({{age}});{{/people}} {{#list}}<{{.}}>{{/list}} {{^none}}none{{/none}}",
      variablesSchema: { type: "object", properties: { people: {}, list: {}, none: {} } },
    });
    await runPrompt(promptId, { people: [{ name: "Ann", age: 3 }, { name: "Bo" }], list: [1, "x"], none: [] });
    expect(t.fake.requests[0]?.messages[0]?.content).toBe("Ann(3);Bo(); <1><x> none");
  });

  it("renders an absent variable named like an Object.prototype property as nothing", async () => {
    const { promptId } = addPrompt({
      systemPrompt: "[{{__proto__}}][{{constructor}}][{{toString}}][{{city}}][{{obj.constructor}}{{obj.a}}]",
      variablesSchema: {
        type: "object",
        properties: { __proto__: {}, constructor: {}, toString: {}, city: {}, obj: {} },
      },
    });
    await runPrompt(promptId, { city: "Rome", obj: { a: 1 } });
    expect(t.fake.requests[0]?.messages[0]?.content).toBe("[][][][Rome][1]");
    // ...and a present one as its value.
    await t.runner.runPrompt(
      {
        organizationId: ORG_A,
        promptId,
        variables: jsonTextOf('{"__proto__":"P","constructor":"C"}'),
        versionId: "",
        model: "",
      },
      asAlice,
    );
    expect(t.fake.requests[1]?.messages[0]?.content).toBe("[P][C][][][]");
  });

  it("refuses variables that do not match the schema: 400 with variables.<field> details, nothing stored", async () => {
    const { promptId } = addPrompt({
      variablesSchema: { ...CITY_VARIABLES, properties: { ...CITY_VARIABLES.properties, days: { type: "integer" } } },
    });
    const missing = await rejection(runPrompt(promptId, {}));
    expect(missing.kind).toBe("invalid_argument");
    expect(missing.details).toEqual([{ field: "variables.city", issue: "is required" }]);
    const wrongType = await rejection(runPrompt(promptId, { city: 42, days: "three" }));
    expect(wrongType.kind).toBe("invalid_argument");
    expect(wrongType.details).toEqual(
      expect.arrayContaining([
        { field: "variables.city", issue: expect.any(String) },
        { field: "variables.days", issue: expect.any(String) },
      ]),
    );
    const empty = await rejection(runPrompt(promptId, { city: "" }));
    expect(empty.details.map((d) => d.field)).toEqual(["variables.city"]);
    const notAnObject = await rejection(runPrompt(promptId, [1, 2]));
    expect(notAnObject.kind).toBe("invalid_argument");
    expect(notAnObject.details.map((d) => d.field)).toEqual(["variables"]);
    expect(t.fake.requests).toEqual([]);
    await expectNothingStored();
  });

  it("appends the caller's messages after the version's own and stores them in the input", async () => {
    const { promptId } = addPrompt({ systemPrompt: "Weather for {{city}}.", variablesSchema: CITY_VARIABLES });
    t.fake.script({ text: "Sunny", usage: { inputTokens: 1, outputTokens: 1 } });
    const messages = [
      { role: "user", content: "And tomorrow?" },
      { role: "assistant", content: "Rain" },
    ];
    const run = await runPrompt(promptId, { city: "Paris" }, { messages });
    expect(JSON.parse(run.inputJson)).toEqual({ variables: { city: "Paris" }, messages });
    expect(t.fake.requests[0]?.messages).toEqual([{ role: "system", content: "Weather for Paris." }, ...messages]);
  });

  it("refuses caller messages of an unknown role: 400 on messages[i], nothing stored", async () => {
    const { promptId } = addPrompt({ variablesSchema: CITY_VARIABLES });
    const system = await rejection(
      runPrompt(promptId, { city: "Paris" }, { messages: [{ role: "function", content: "x" }] }),
    );
    expect(system.kind).toBe("invalid_argument");
    expect(system.details).toEqual([
      { field: "messages[0].role", issue: 'must be "system", "developer", "user", "assistant" or "tool"' },
    ]);
    // Text content and the list itself are the message types' own (ChatMessage.content is a string).
    expect(t.fake.requests).toEqual([]);
    await expectNothingStored();
  });

  it("offers the caller's tools beside the version's and ends the run on a call to one", async () => {
    const weather = stubTool("weather", { tempC: 21 });
    const { promptId } = addPrompt({ tools: [weather], temperature: 0.2 });
    // First turn: Kiln's own tool only, under the caller's tool choice; second: Kiln's and the caller's.
    t.fake.script(
      { toolCalls: [{ id: "call_1", name: "weather", input: { city: "Paris" } }] },
      {
        toolCalls: [
          { id: "call_2", name: "weather", input: { city: "Oslo" } },
          { id: "call_3", name: "lookup", input: { q: "x" } },
        ],
      },
    );
    const run = await t.runner.runPrompt(
      {
        organizationId: ORG_A,
        promptId,
        versionId: "",
        model: "",
        tools: [{ name: "lookup", description: "Looks up", parameters: jsonText({ type: "object" }) }],
        toolChoice: { mode: "required", name: "" },
        parameters: { temperature: 0.9, stop: ["END"] },
      },
      asAlice,
    );
    expect(run.status).toBe("succeeded");
    expect(parse(run.outputJson)).toEqual({
      text: "",
      toolCalls: [{ id: "call_3", name: "lookup", input: { q: "x" } }],
    });
    // Kiln ran its own tool in both turns; the caller's call was left to the caller.
    expect(run.toolCallCount).toBe(2);
    expect(t.fake.requests).toHaveLength(2);
    expect(t.fake.requests[0]?.tools?.map((d) => d.name)).toEqual(["weather", "lookup"]);
    expect(t.fake.requests[0]).toMatchObject({ toolChoice: "required", temperature: 0.9, stop: ["END"] });
    expect(t.fake.requests[1]?.toolChoice).toBeUndefined();
    expect(parse(run.inputJson)).toMatchObject({
      tools: [{ name: "lookup" }],
      toolChoice: "required",
      parameters: { temperature: 0.9, stop: ["END"] },
    });
  });

  it("refuses an unknown or unavailable model with 400 on field model, nothing stored", async () => {
    const { promptId } = addPrompt();
    const unknown = await rejection(runPrompt(promptId, {}, { model: "nope/none" }));
    expect(unknown.kind).toBe("invalid_argument");
    expect(unknown.details).toEqual([{ field: "model", issue: "is not a known model" }]);
    // Listed in the catalog, but this deployment has no OpenAI credentials.
    const unavailable = await rejection(runPrompt(promptId, {}, { model: "openai/gpt-4o-mini" }));
    expect(unavailable.kind).toBe("invalid_argument");
    expect(unavailable.details).toEqual([{ field: "model", issue: "is not available in this deployment" }]);
    // The version's own model is checked the same way.
    const { promptId: pinned } = addPrompt({ model: "gone/model" });
    const fromVersion = await rejection(runPrompt(pinned, {}));
    expect(fromVersion.kind).toBe("invalid_argument");
    expect(fromVersion.details.map((d) => d.field)).toEqual(["model"]);
    expect(t.fake.requests).toEqual([]);
    await expectNothingStored();
  });

  it("resolves the model: the request's, else the version's, else the deployment's default", async () => {
    const { promptId: withModel } = addPrompt({ model: "fake/version" });
    const { promptId: withoutModel } = addPrompt();
    const requested = await runPrompt(withModel, {}, { model: "fake/request" });
    const fromVersion = await runPrompt(withModel, {});
    const byDefault = await runPrompt(withoutModel, {});
    expect([requested.model, fromVersion.model, byDefault.model]).toEqual([
      "fake/request",
      "fake/version",
      "fake/default",
    ]);
    expect(t.fake.requests.map((r) => r.model)).toEqual(["request", "version", "default"]);
    // Each at its own price: 10 in, 5 out.
    expect(requested.estimatedCostUsd).toBeCloseTo((10 * 5 + 5 * 6) / 1e6, 12);
    expect(fromVersion.estimatedCostUsd).toBeCloseTo((10 * 3 + 5 * 4) / 1e6, 12);
    expect(byDefault.estimatedCostUsd).toBeCloseTo((10 * 1 + 5 * 2) / 1e6, 12);
  });

  it("records a null cost for a model without a price", async () => {
    const { promptId } = addPrompt({ model: "fake/unpriced" });
    const run = await runPrompt(promptId, {});
    expect(run.status).toBe("succeeded");
    expect(run.estimatedCostUsd).toBeNull();
  });

  it.each(["provider_error", "provider_timeout"] as const)(
    "stores a failed run with error %s when the provider fails, and publishes it once",
    async (kind) => {
      const { promptId } = addPrompt({ variablesSchema: CITY_VARIABLES });
      t.fake.script(providerFailure(kind, `the provider said no (${kind})`));
      const run = await runPrompt(promptId, { city: "Paris" });
      expect(run).toMatchObject({
        status: "failed",
        outputJson: null,
        error: { code: kind, message: `the provider said no (${kind})` },
        provider: "fake",
        model: "fake/default",
        usage: { inputTokens: 0, outputTokens: 0 },
        inputJson: '{"variables":{"city":"Paris"}}',
      });
      const stored = await t.runs.findOne({ _id: run._id });
      expect(stored).toMatchObject({ status: "failed", error: { code: kind } });
      expect((await t.events()).map((e) => [e.subject, e.body.runId, e.body.status])).toEqual([
        ["runs.completed.prompt", run._id, "failed"],
      ]);
      expect(await t.streamed()).toBe(1);
    },
  );

  it("asks identity first: a refusal stores nothing and never reaches the catalog", async () => {
    const { promptId } = addPrompt();
    const wrongOrg = await rejection(runPrompt(promptId, {}, {}, ctxOf(keyB(["runs:write"]))));
    expect(wrongOrg.kind).toBe("permission_denied");
    const noScope = await rejection(runPrompt(promptId, {}, {}, ctxOf(keyA(["runs:read"]))));
    expect(noScope.kind).toBe("permission_denied");
    const stranger = await rejection(runPrompt(promptId, {}, {}, ctxOf(mallory)));
    expect(stranger.kind).toBe("not_found");
    expect(t.catalog.calls).toEqual([]);
    await expectNothingStored();
  });

  it("passes the catalog's not_found on: a prompt of another organization does not exist", async () => {
    const { promptId } = addPrompt({ organizationId: ORG_B });
    const error = await rejection(runPrompt(promptId, {}));
    expect(error.kind).toBe("not_found");
    await expectNothingStored();
  });

  it("runs the tools the model calls and hands their results back", async () => {
    const weather = stubTool("weather", { temperatureC: 21 });
    const { promptId } = addPrompt({ variablesSchema: CITY_VARIABLES, tools: [weather] });
    t.fake.script(
      {
        toolCalls: [{ id: "call_1", name: "weather", input: { city: "Paris" } }],
        usage: { inputTokens: 7, outputTokens: 1 },
      },
      { text: "21 degrees", usage: { inputTokens: 20, outputTokens: 3 } },
    );
    const run = await runPrompt(promptId, { city: "Paris" });
    expect(run.status).toBe("succeeded");
    expect(parse(run.outputJson)).toEqual({ text: "21 degrees" });
    expect(run.usage).toEqual({ inputTokens: 27, outputTokens: 4 });
    expect(run.toolCallCount).toBe(1);
    expect(run.toolCallCounts).toEqual([{ toolKey: "weather", count: 1 }]);
    expect(parse(run.toolCallsJson)).toEqual([
      {
        toolKey: "weather",
        toolVersionId: "tv_weather",
        input: { city: "Paris" },
        output: { temperatureC: 21 },
        latencyMs: expect.any(Number),
      },
    ]);
    const [first, second] = t.fake.requests;
    expect(first?.tools).toEqual([{ name: "weather", description: "The weather tool", inputSchema: CITY_INPUT }]);
    expect(second?.messages.slice(1)).toEqual([
      { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "weather", input: { city: "Paris" } }] },
      { role: "tool", toolCallId: "call_1", content: '{"temperatureC":21}' },
    ]);
  });

  it("records tool errors in toolCalls and hands them to the model, which may still answer", async () => {
    const weather = stubTool("weather", { temperatureC: 21 });
    const { promptId } = addPrompt({ tools: [weather] });
    t.fake.script(
      {
        toolCalls: [
          { id: "c1", name: "weather", input: { city: 42 } },
          { id: "c2", name: "missing_tool", input: {} },
          { id: "c3", name: "weather", input: { city: "Oslo" } },
        ],
      },
      { text: "done" },
    );
    const run = await runPrompt(promptId, {});
    expect(run.status).toBe("succeeded");
    expect(run.error).toBeNull();
    const calls = parse(run.toolCallsJson) as Record<string, unknown>[];
    expect(calls).toEqual([
      {
        toolKey: "weather",
        toolVersionId: "tv_weather",
        input: { city: 42 },
        output: null,
        latencyMs: expect.any(Number),
        error: { code: "invalid_tool_input", message: expect.stringContaining("input.city") },
      },
      {
        toolKey: "missing_tool",
        toolVersionId: "",
        input: {},
        output: null,
        latencyMs: 0,
        error: { code: "unknown_tool", message: expect.stringContaining("missing_tool") },
      },
      {
        toolKey: "weather",
        toolVersionId: "tv_weather",
        input: { city: "Oslo" },
        output: { temperatureC: 21 },
        latencyMs: expect.any(Number),
      },
    ]);
    expect(run.toolCallCount).toBe(3);
    expect(run.toolCallCounts).toEqual([
      { toolKey: "weather", count: 2 },
      { toolKey: "missing_tool", count: 1 },
    ]);
    const toolMessages = t.fake.requests[1]?.messages.filter((m) => m.role === "tool") ?? [];
    expect(toolMessages.map((m) => (m.role === "tool" ? m.toolCallId : ""))).toEqual(["c1", "c2", "c3"]);
    const contents = toolMessages.map((m) => JSON.parse(m.content) as Record<string, { code?: string }>);
    expect(contents[0]?.error?.code).toBe("invalid_tool_input");
    expect(contents[1]?.error?.code).toBe("unknown_tool");
    expect(contents[2]).toEqual({ temperatureC: 21 });
  });

  it("bounds the tool loop: a model that always calls tools fails with max_tool_rounds", async () => {
    const weather = stubTool("weather", { temperatureC: 21 });
    const { promptId } = addPrompt({ tools: [weather] });
    let n = 0;
    t.fake.setFallback(() => ({
      toolCalls: [{ id: `call_${++n}`, name: "weather", input: { city: "Paris" } }],
      usage: { inputTokens: 2, outputTokens: 1 },
    }));
    const run = await runPrompt(promptId, {});
    // maxToolRounds = 3: three turns may call tools; the fourth that still does fails the run.
    expect(t.fake.requests).toHaveLength(4);
    expect(run.status).toBe("failed");
    expect(run.error).toEqual({ code: "max_tool_rounds", message: expect.stringContaining("3") });
    expect(run.outputJson).toBeNull();
    expect(run.toolCallCount).toBe(3);
    expect(run.usage).toEqual({ inputTokens: 8, outputTokens: 4 });
    expect((await t.runs.findOne({ _id: run._id }))?.status).toBe("failed");
    expect(await t.events()).toHaveLength(1);
  });

  it("answers json_schema formats with the parsed json, and sends the format to the model", async () => {
    const schema = { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] };
    const { promptId } = addPrompt({ responseFormat: { type: "json_schema", name: "forecast", schema } });
    t.fake.script({ text: '{"summary":"Sunny"}', json: { summary: "Sunny" } });
    const run = await runPrompt(promptId, {});
    expect(parse(run.outputJson)).toEqual({ text: '{"summary":"Sunny"}', json: { summary: "Sunny" } });
    expect(t.fake.requests[0]?.responseFormat).toEqual({ type: "json_schema", name: "forecast", schema });
  });

  it("keeps __proto__-named variables as data in the stored input", async () => {
    const { promptId } = addPrompt({
      variablesSchema: { type: "object", properties: { __proto__: { type: "object" } }, required: ["__proto__"] },
    });
    const run = await t.runner.runPrompt(
      { organizationId: ORG_A, promptId, variables: jsonTextOf('{"__proto__":{"x":1}}'), versionId: "", model: "" },
      asAlice,
    );
    expect(run.status).toBe("succeeded");
    expect(run.inputJson).toBe('{"variables":{"__proto__":{"x":1}}}');
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe("runSkill", () => {
  function addSkill(fixture: Omit<SkillFixture, "id" | "versionId" | "organizationId"> & { organizationId?: string }) {
    const n = ++promptCounter;
    const skill: SkillFixture = { id: `skl_${n}`, versionId: `sv_${n}`, organizationId: ORG_A, ...fixture };
    t.catalog.skills.set(skill.id, skill);
    return skill;
  }

  const runSkill = (skillId: string, input: unknown, ctx: CallContext = asAlice) =>
    t.runner.runSkill({ organizationId: ORG_A, skillId, input: jsonText(input), versionId: "" }, ctx);

  function tripSkill() {
    const forecastSchema = {
      type: "object",
      properties: { summary: { type: "string" }, temp: { type: "number" } },
      required: ["summary"],
    };
    return addSkill({
      inputSchema: CITY_VARIABLES,
      steps: [
        {
          alias: "forecast",
          prompt: promptOf({
            systemPrompt: "Forecast for {{city}}.",
            variablesSchema: CITY_VARIABLES,
            responseFormat: { type: "json_schema", name: "forecast", schema: forecastSchema },
          }),
        },
        {
          alias: "advice",
          variables: { summary: "{{steps.forecast.output.summary}}", tone: "cheerful", limit: 3 },
          prompt: promptOf({
            systemPrompt: "Advise ({{tone}}, {{limit}} items) for {{city}} given: {{summary}}",
            variablesSchema: {
              type: "object",
              properties: {
                summary: { type: "string" },
                tone: { type: "string" },
                limit: { type: "integer" },
                city: {},
              },
              required: ["summary"],
            },
            model: "fake/version",
          }),
        },
        {
          alias: "final",
          variables: { all: "{{steps.advice.output}}", raw: "{{steps.forecast.output}}" },
          prompt: promptOf({
            systemPrompt: "Sum up: {{all}} / {{raw}}",
            variablesSchema: { type: "object", properties: { all: {}, raw: {} } },
          }),
        },
      ],
    });
  }

  it("executes the steps in order with their bindings and stores one skill run", async () => {
    const skill = tripSkill();
    t.fake.script(
      {
        text: '{"summary":"Sunny","temp":21}',
        json: { summary: "Sunny", temp: 21 },
        usage: { inputTokens: 100, outputTokens: 10 },
      },
      { text: "Wear a hat", usage: { inputTokens: 50, outputTokens: 5 } },
      { text: "All good", usage: { inputTokens: 30, outputTokens: 3 } },
    );
    const run = await runSkill(skill.id, { city: "Paris" });

    expect(t.fake.requests.map((r) => r.messages[0]?.content)).toEqual([
      "Forecast for Paris.",
      "Advise (cheerful, 3 items) for Paris given: Sunny",
      'Sum up: Wear a hat / {"summary":"Sunny","temp":21}',
    ]);
    expect(t.fake.requests.map((r) => r.model)).toEqual(["default", "version", "default"]);
    expect(run).toMatchObject({
      _id: expect.stringMatching(/^srun_[0-9a-f]{32}$/),
      kind: "skill",
      organizationId: ORG_A,
      status: "succeeded",
      inputJson: '{"input":{"city":"Paris"}}',
      outputJson: '{"text":"All good"}',
      // The steps disagree on the model, not on the provider.
      provider: "fake",
      model: null,
      usage: { inputTokens: 180, outputTokens: 18 },
      error: null,
      skillId: skill.id,
      skillVersionId: skill.versionId,
      promptId: "",
    });
    const expectedCost = (100 * 1 + 10 * 2 + 50 * 3 + 5 * 4 + 30 * 1 + 3 * 2) / 1e6;
    expect(run.estimatedCostUsd).toBeCloseTo(expectedCost, 12);
    const steps = parse(run.stepsJson) as Record<string, unknown>[];
    expect(steps.map((s) => [s.stepId, s.status, s.model])).toEqual([
      ["forecast", "succeeded", "fake/default"],
      ["advice", "succeeded", "fake/version"],
      ["final", "succeeded", "fake/default"],
    ]);
    expect(steps.map((s) => s.input)).toEqual([
      { city: "Paris" },
      { summary: "Sunny", tone: "cheerful", limit: 3, city: "Paris" },
      { all: "Wear a hat", raw: { summary: "Sunny", temp: 21 } },
    ]);
    expect(steps[0]?.output).toEqual({ text: '{"summary":"Sunny","temp":21}', json: { summary: "Sunny", temp: 21 } });
    expect(steps.map((s) => s.promptVersionId)).toEqual(skill.steps.map((s) => s.prompt.version?.id));

    expect(await t.runs.findOne({ _id: run._id })).toEqual(run);
    expect((await t.events()).map((e) => [e.subject, e.body.runId, e.body.skillId, e.body.status])).toEqual([
      ["runs.completed.skill", run._id, skill.id, "succeeded"],
    ]);
    expect(t.catalog.calls[0]).toMatchObject({
      method: "resolveSkillVersion",
      req: { organizationId: ORG_A, skillId: skill.id, versionId: "", preferDraft: false },
      principal: alice,
    });
  });

  it("offers the skill's tools to every step besides the step's own", async () => {
    const skill = addSkill({
      tools: [stubTool("shared", { s: 1 })],
      steps: [
        { alias: "one", prompt: promptOf({ tools: [stubTool("own", { o: 1 })] }) },
        { alias: "two", prompt: promptOf() },
      ],
    });
    await runSkill(skill.id, {});
    expect(t.fake.requests.map((r) => r.tools?.map((d) => d.name))).toEqual([["own", "shared"], ["shared"]]);
  });

  it("stops at a failing step: a failed run with the steps so far is stored and published", async () => {
    const skill = tripSkill();
    t.fake.script(
      { text: '{"summary":"Sunny"}', json: { summary: "Sunny" } },
      providerFailure("provider_timeout", "fake did not answer in time"),
    );
    const run = await runSkill(skill.id, { city: "Paris" });
    expect(t.fake.requests).toHaveLength(2);
    expect(run).toMatchObject({
      status: "failed",
      outputJson: null,
      error: { code: "provider_timeout", message: "fake did not answer in time" },
    });
    const steps = parse(run.stepsJson) as Record<string, unknown>[];
    expect(steps.map((s) => [s.stepId, s.status, s.error])).toEqual([
      ["forecast", "succeeded", null],
      ["advice", "failed", { code: "provider_timeout", message: "fake did not answer in time" }],
    ]);
    expect(await t.runs.countDocuments({ _id: run._id, status: "failed" })).toBe(1);
    expect((await t.events()).map((e) => e.body.status)).toEqual(["failed"]);
  });

  it("fails a step whose bound variables do not match its schema, without calling the model for it", async () => {
    const skill = tripSkill();
    // The forecast has no summary: the advice step's required variable is absent.
    t.fake.script({ text: '{"temp":3}', json: { temp: 3 } });
    const run = await runSkill(skill.id, { city: "Paris" });
    expect(t.fake.requests).toHaveLength(1);
    expect(run.status).toBe("failed");
    expect(run.error?.code).toBe("invalid_variables");
    expect(run.error?.message).toContain("steps.advice.variables.summary");
    const steps = parse(run.stepsJson) as Record<string, unknown>[];
    expect(steps.map((s) => [s.stepId, s.status])).toEqual([
      ["forecast", "succeeded"],
      ["advice", "failed"],
    ]);
    expect(await t.events()).toHaveLength(1);
  });

  it("refuses input that does not match the skill's input schema: 400 on input.<field>, nothing stored", async () => {
    const skill = tripSkill();
    const error = await rejection(runSkill(skill.id, { city: 7 }));
    expect(error.kind).toBe("invalid_argument");
    expect(error.details.map((d) => d.field)).toEqual(["input.city"]);
    const missing = await rejection(runSkill(skill.id, {}));
    expect(missing.details).toEqual([{ field: "input.city", issue: "is required" }]);
    const notObject = await rejection(runSkill(skill.id, "Paris"));
    expect(notObject.details.map((d) => d.field)).toEqual(["input"]);
    expect(t.fake.requests).toEqual([]);
    await expectNothingStored();
  });

  it("refuses to run or preview a skill version without steps (409 failed_precondition), storing nothing", async () => {
    const empty = addSkill({ steps: [] });
    const run = await rejection(runSkill(empty.id, {}));
    expect(run.kind).toBe("failed_precondition");
    expect(run.details).toEqual([{ field: "promptComposition", issue: "is empty" }]);
    const preview = await rejection(
      t.runner.previewSkill(
        { organizationId: ORG_A, skillId: empty.id, input: jsonTextOf("{}"), versionId: "" },
        asAlice,
      ),
    );
    expect(preview.kind).toBe("failed_precondition");
    await expectNothingStored();
  });

  it("checks every step's model before running anything", async () => {
    const skill = addSkill({
      steps: [
        { alias: "first", prompt: promptOf() },
        { alias: "second", prompt: promptOf({ model: "nope/none" }) },
      ],
    });
    const error = await rejection(runSkill(skill.id, {}));
    expect(error.kind).toBe("invalid_argument");
    expect(error.details.map((d) => d.field)).toEqual(["steps.second.model"]);
    expect(t.fake.requests).toEqual([]);
    await expectNothingStored();
  });

  it("refuses callers identity refuses, and skills of other organizations, storing nothing", async () => {
    const skill = tripSkill();
    expect((await rejection(runSkill(skill.id, { city: "X" }, ctxOf(keyA(["runs:read"]))))).kind).toBe(
      "permission_denied",
    );
    const theirs = addSkill({ organizationId: ORG_B, steps: [{ alias: "a", prompt: promptOf() }] });
    expect((await rejection(runSkill(theirs.id, {}))).kind).toBe("not_found");
    await expectNothingStored();
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe("previewSkill", () => {
  function addSimpleSkill() {
    const skill: SkillFixture = {
      id: "skl_preview",
      versionId: "sv_preview",
      organizationId: ORG_A,
      steps: [
        { alias: "one", prompt: promptOf({ systemPrompt: "One {{city}}", variablesSchema: CITY_VARIABLES }) },
        {
          alias: "two",
          variables: { prev: "{{steps.one.output}}" },
          prompt: promptOf({
            systemPrompt: "Two {{prev}}",
            variablesSchema: { type: "object", properties: { prev: {} } },
          }),
        },
      ],
      inputSchema: CITY_VARIABLES,
    };
    t.catalog.skills.set(skill.id, skill);
    return skill;
  }

  const preview = (ctx: CallContext = asAlice) =>
    t.runner.previewSkill(
      { organizationId: ORG_A, skillId: "skl_preview", input: jsonTextOf('{"city":"Paris"}'), versionId: "" },
      ctx,
    );

  it("runs the draft (preferDraft) and stores nothing, publishes nothing", async () => {
    const skill = addSimpleSkill();
    t.fake.script({ text: "first" }, { text: "second" });
    const run = await preview();
    expect(t.catalog.calls[0]?.req).toMatchObject({ skillId: skill.id, preferDraft: true });
    expect(run).toMatchObject({ _id: "", kind: "skill", status: "succeeded", outputJson: '{"text":"second"}' });
    expect(t.fake.requests.map((r) => r.messages[0]?.content)).toEqual(["One Paris", "Two first"]);
    const proto = runToProto(run, true);
    expect(proto).toMatchObject({ id: "", preview: true, skillId: skill.id, skillVersionId: skill.versionId });
    expect(proto.steps).toHaveLength(2);
    await expectNothingStored();
  });

  it.each(["provider_error", "provider_timeout"] as const)(
    "throws a DomainError %s when the provider fails, storing nothing",
    async (kind) => {
      addSimpleSkill();
      t.fake.script({ text: "first" }, providerFailure(kind, `upstream ${kind}`));
      const error = await rejection(preview());
      expect(error.kind).toBe(kind);
      expect(error.message).toBe(`upstream ${kind}`);
      await expectNothingStored();
    },
  );

  it("answers other step failures as a failed run (not a provider failure)", async () => {
    addSimpleSkill();
    t.fake.setFallback({ toolCalls: [{ id: "x", name: "nothing", input: {} }] });
    const run = await preview();
    expect(run.status).toBe("failed");
    expect(run.error?.code).toBe("max_tool_rounds");
    await expectNothingStored();
  });

  it("needs runs:write in the organization", async () => {
    addSimpleSkill();
    expect((await rejection(preview(ctxOf(keyA(["runs:read"]))))).kind).toBe("permission_denied");
    expect(t.fake.requests).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe("getRun", () => {
  async function storedRuns() {
    const { promptId } = addPrompt();
    const promptRun = await runPrompt(promptId, {});
    const skill: SkillFixture = {
      id: "skl_g",
      versionId: "sv_g",
      organizationId: ORG_A,
      steps: [{ alias: "a", prompt: promptOf() }],
    };
    t.catalog.skills.set(skill.id, skill);
    const skillRun = await t.runner.runSkill(
      { organizationId: ORG_A, skillId: skill.id, input: jsonTextOf("{}"), versionId: "" },
      asAlice,
    );
    return { promptRun, skillRun };
  }

  it("reads a stored run back, authorized with runs:read in the run's organization", async () => {
    const { skillRun, promptRun } = await storedRuns();
    t.identity.calls.length = 0;
    const read = await t.runner.getRun({ id: skillRun._id, kind: "skill" }, ctxOf(keyA(["runs:read"])));
    expect(read).toEqual(skillRun);
    expect(t.identity.calls.map((c) => c.input)).toEqual([
      { organizationId: ORG_A, requireAi: true, scope: "runs:read" },
    ]);
    // Without a kind, any kind.
    expect((await t.runner.getRun({ id: promptRun._id, kind: "" }, asAlice))._id).toBe(promptRun._id);
  });

  it("does not find a run of another kind, or an unknown id", async () => {
    const { promptRun, skillRun } = await storedRuns();
    const wrongKind = await rejection(t.runner.getRun({ id: promptRun._id, kind: "skill" }, asAlice));
    expect([wrongKind.kind, wrongKind.message]).toEqual(["not_found", "skill run not found"]);
    expect((await rejection(t.runner.getRun({ id: skillRun._id, kind: "prompt" }, asAlice))).kind).toBe("not_found");
    expect((await rejection(t.runner.getRun({ id: `srun_${"0".repeat(32)}`, kind: "skill" }, asAlice))).kind).toBe(
      "not_found",
    );
  });

  it("does not find a run of another organization, for users and API keys alike", async () => {
    const { skillRun } = await storedRuns();
    const stranger = await rejection(t.runner.getRun({ id: skillRun._id, kind: "skill" }, ctxOf(mallory)));
    expect([stranger.kind, stranger.message]).toEqual(["not_found", "skill run not found"]);
    // A key of organization B, with the right scope: the run does not exist for it (api.md
    // "Organization scoping": a resource the caller may not see is a 404).
    const otherKey = await rejection(t.runner.getRun({ id: skillRun._id, kind: "skill" }, ctxOf(keyB(["runs:read"]))));
    expect([otherKey.kind, otherKey.message]).toEqual(["not_found", "skill run not found"]);
  });

  it("refuses a key of the run's organization without runs:read (403)", async () => {
    const { skillRun } = await storedRuns();
    const error = await rejection(t.runner.getRun({ id: skillRun._id, kind: "skill" }, ctxOf(keyA(["runs:write"]))));
    expect(error.kind).toBe("permission_denied");
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe("the run.completed outbox", () => {
  it("keeps a run whose event the bus refused pending, and the relay publishes it later exactly once", async () => {
    const { promptId } = addPrompt();
    t.bus.down = true;
    const run = await runPrompt(promptId, {});
    // The request still succeeded: the run is stored, its event pending.
    expect(run.status).toBe("succeeded");
    expect(await t.streamed()).toBe(0);
    expect(await t.intents.findOne({ _id: run._id })).toMatchObject({ _id: run._id });
    // Still down: the relay tries and leaves it pending.
    expect(await t.outbox.relayPending()).toBe(0);
    expect(await t.intents.countDocuments({})).toBe(1);

    t.bus.down = false;
    const second = await runPrompt(promptId, {});
    expect((await t.events()).map((e) => e.body.runId)).toEqual([second._id]);
    expect(await t.outbox.relayPending()).toBe(1);
    expect(await t.outbox.relayPending()).toBe(0);
    await t.outbox.settled();
    expect(await t.intents.countDocuments({})).toBe(0);
    expect((await t.events()).map((e) => e.body.runId)).toEqual([second._id, run._id]);
    expect((await t.events()).map((e) => e.msgId)).toEqual([second._id, run._id]);
    expect(await t.streamed()).toBe(2);
  });

  it("publishes pending events oldest first, each once, across several relays", async () => {
    const { promptId } = addPrompt();
    t.bus.down = true;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await runPrompt(promptId, { i }))._id);
    await t.outbox.settled();
    t.bus.down = false;
    // Two relays at once share one pass.
    expect(await Promise.all([t.outbox.relayPending(), t.outbox.relayPending()])).toEqual([3, 3]);
    expect(await t.outbox.relayPending()).toBe(0);
    expect((await t.events()).map((e) => e.body.runId)).toEqual(ids);
    expect(await t.streamed()).toBe(3);
  });
});

describe("the run.completed relay", () => {
  async function relaySetup() {
    const store = createMemoryStore();
    const runs = runCollection(store);
    const intents = runEventIntentCollection(store);
    const bus = createMemoryBus();
    await bus.ensureStream(RUNS_STREAM);
    await bus.ensureConsumer({ stream: RUNS_STREAM.name, durable: "observer", filterSubject: "runs.>" });
    const clock = { ms: Date.parse("2026-11-23T12:00:00Z") };
    const outbox = createRunEventOutbox(runs, intents, bus, logger, {
      relayAfterMs: 5_000,
      orphanAfterMs: 60_000,
      now: () => new Date(clock.ms),
    });
    const stored = (id: string, status: "succeeded" | "running") =>
      runs.insertOne({ ...promptRunFixture(id, ORG_A), status });
    return { store, runs, intents, bus, clock, outbox, stored };
  }

  it("leaves fresh intents to the process storing them, running runs to their runner, and drops orphans", async () => {
    const r = await relaySetup();
    await r.outbox.intend("run_done");
    await r.stored("run_done", "succeeded");
    await r.outbox.intend("run_running");
    await r.stored("run_running", "running");
    // The process died before storing this one: it never will be.
    await r.outbox.intend("run_never");

    // Younger than relayAfterMs: not the relay's yet.
    expect(await r.outbox.relayPending()).toBe(0);
    expect((await r.bus.streamInfo(RUNS_STREAM.name)).messages).toBe(0);

    r.clock.ms += 5_000;
    expect(await r.outbox.relayPending()).toBe(1);
    await r.outbox.settled();
    expect((await r.intents.find({})).map((i) => i._id).sort()).toEqual(["run_never", "run_running"]);

    // The run that never came is forgotten after orphanAfterMs; the running one waits for its runner.
    r.clock.ms += 60_000;
    expect(await r.outbox.relayPending()).toBe(0);
    await r.outbox.settled();
    expect((await r.intents.find({})).map((i) => i._id)).toEqual(["run_running"]);
    expect((await r.bus.streamInfo(RUNS_STREAM.name)).messages).toBe(1);
    await r.outbox.stop();
    await r.bus.close();
    await r.store.close();
  });
});
