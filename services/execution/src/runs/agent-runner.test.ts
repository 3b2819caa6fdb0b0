import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { DomainError, notFound, permissionDenied } from "@kiln/kit/errors";
import { jsonText } from "@kiln/kit/json-text";
import { createLogger } from "@kiln/kit/logger";
import type { Principal } from "@kiln/kit/principal";
import { toConnectError } from "@kiln/kit/rpc/errors";
import { createMemoryStore } from "@kiln/kit/store/memory";
import type { ModelEntry } from "@kiln/models/catalog";
import type { ModelProvider, ModelRequest } from "@kiln/models/provider";
import { createProviderRegistry } from "@kiln/models/registry";
import {
  type CatalogService,
  type ResolveAgentVersionRequest,
  ResolveAgentVersionResponseSchema,
  type ResolvedAgentStepSchema,
  type ResolvedPromptSchema,
} from "@kiln/proto/catalog";
import { AuthorizeResponseSchema } from "@kiln/proto/identity";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRunEventOutbox, RUNS_STREAM, runEventIntentCollection } from "../events/run-events.js";
import { runCollection } from "../store/run-store.js";
import { createInputValidator } from "../tools/input-validator.js";
import { createToolExecutor } from "../tools/tool-executor.js";
import { createAgentRunner } from "./agent-runner.js";
import type { CallContext } from "./call-context.js";
import { createRunLeases } from "./run-leases.js";

/**
 * The agent runtime use cases (api.md "Agents", "Runs") against a fake catalog and identity, a
 * provider that answers by prompt, an in-memory store and bus.
 */

const ORG_A = "org_a";
const ORG_B = "org_b";
const alice: Principal = { type: "user", id: "usr_alice" };
const mallory: Principal = { type: "user", id: "usr_mallory" };
const asAlice: CallContext = { principal: alice, requestId: "req_test" };
const asMallory: CallContext = { principal: mallory };
const keyOfB: CallContext = {
  principal: { type: "api_key", id: "key_b", organizationId: ORG_B, scopes: ["runs:read", "runs:write"] },
};
const readOnlyKeyOfA: CallContext = {
  principal: { type: "api_key", id: "key_a", organizationId: ORG_A, scopes: ["runs:read"] },
};

const identity: IdentityAuth = {
  async verifyApiKey() {
    throw new Error("not used");
  },
  async authorize(principal, input) {
    if (principal.type === "user") {
      const member = (principal.id === alice.id && input.organizationId === ORG_A) || principal.id === mallory.id;
      if (!member || (principal.id === mallory.id && input.organizationId !== ORG_B)) throw notFound("organization");
    } else if (principal.type === "api_key") {
      if (principal.organizationId !== input.organizationId) throw permissionDenied("another organization");
      if (input.scope && !principal.scopes.includes(input.scope)) throw permissionDenied(`lacks ${input.scope}`);
    }
    return create(AuthorizeResponseSchema, {});
  },
};

const MODELS: ModelEntry[] = [
  {
    id: "fake/default",
    provider: "fake",
    model: "default",
    capabilities: { tools: true, jsonSchema: true, input: ["text"] },
    pricing: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 },
  },
];

/** Answers each prompt by its system prompt: "classify ..." gives JSON, anything else echoes. */
function fakeProvider() {
  const requests: ModelRequest[] = [];
  const provider: ModelProvider = {
    id: "fake",
    async generate(request) {
      requests.push(request);
      const system = request.messages[0]?.content ?? "";
      const json = system.startsWith("classify")
        ? { label: system.includes("urgent") ? "urgent" : "normal" }
        : undefined;
      return {
        text: json ? JSON.stringify(json) : `answer: ${system}`,
        ...(json ? { json } : {}),
        toolCalls: [],
        usage: { inputTokens: 100, outputTokens: 50 },
        finishReason: "stop",
        provider: "fake",
        model: request.model,
        retries: 0,
      };
    },
  };
  return { provider, requests };
}

type PromptInit = MessageInitShape<typeof ResolvedPromptSchema>;
type StepInit = MessageInitShape<typeof ResolvedAgentStepSchema>;

const promptOf = (id: string, systemPrompt: string, variables: string[]): PromptInit => ({
  promptName: id,
  version: {
    id: `pv_${id}`,
    promptId: `prm_${id}`,
    organizationId: ORG_A,
    version: 1,
    status: "published",
    content: {
      systemPrompt,
      variablesSchema: {
        json: JSON.stringify({
          type: "object",
          properties: Object.fromEntries(variables.map((v) => [v, {}])),
          required: variables,
        }),
      },
      responseFormat: { json: JSON.stringify({ type: "text" }) },
    },
  },
  tools: [],
});

const INPUT_SCHEMA = {
  type: "object",
  properties: { text: { type: "string" }, city: { type: "string" } },
  required: ["text", "city"],
};

/** Three steps and a branch: classify → (urgent? escalate : weather tool) → reply. */
const WORKFLOW = {
  inputSchema: INPUT_SCHEMA,
  entry: "classify",
  steps: [
    {
      id: "classify",
      type: "prompt",
      ref: { promptId: "prm_classify" },
      input: { text: "{{inputs.text}}" },
      next: [
        { when: { "==": [{ var: "steps.classify.output.label" }, "urgent"] }, to: "escalate" },
        { when: true, to: "weather" },
      ],
    },
    { id: "escalate", type: "prompt", ref: { promptId: "prm_escalate" }, input: { text: "{{inputs.text}}" } },
    { id: "weather", type: "tool", ref: { toolId: "tool_weather" }, input: { city: "{{inputs.city}}" }, next: "reply" },
    {
      id: "reply",
      type: "prompt",
      ref: { promptId: "prm_reply" },
      input: { label: "{{steps.classify.output.label}}", sky: "{{steps.weather.output.sky}}", city: "{{inputs.city}}" },
    },
  ],
  output: "{{steps.reply.output}}",
};

const STEPS: StepInit[] = [
  { stepId: "classify", prompt: promptOf("classify", "classify {{text}}", ["text"]) },
  { stepId: "escalate", prompt: promptOf("escalate", "escalate {{text}}", ["text"]) },
  {
    stepId: "weather",
    tool: {
      toolId: "tool_weather",
      toolVersionId: "tv_weather",
      toolKey: "weather",
      content: {
        type: "manual_stub",
        config: { json: JSON.stringify({ result: { sky: "clear", temperatureC: 21 } }) },
        inputSchema: {
          json: JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
        },
      },
    },
  },
  { stepId: "reply", prompt: promptOf("reply", "reply {{label}} {{sky}} in {{city}}", ["label", "sky", "city"]) },
];

interface AgentFixture {
  organizationId: string;
  versions: Record<string, { workflow: unknown; steps: StepInit[] }>;
  published: string;
}

function fakeCatalog() {
  const agents = new Map<string, AgentFixture>();
  const calls: ResolveAgentVersionRequest[] = [];
  const client = {
    async resolveAgentVersion(req: ResolveAgentVersionRequest) {
      calls.push(req);
      const agent = agents.get(req.agentId);
      if (!agent || agent.organizationId !== req.organizationId) throw toConnectError(notFound("agent"));
      const versionId = req.versionId || agent.published;
      const version = agent.versions[versionId];
      if (!version) throw toConnectError(notFound("agent version"));
      return create(ResolveAgentVersionResponseSchema, {
        version: {
          id: versionId,
          agentId: req.agentId,
          organizationId: agent.organizationId,
          version: 1,
          status: "published",
          workflow: { json: JSON.stringify(version.workflow) },
        },
        steps: version.steps,
      });
    },
  };
  return { client: client as unknown as Client<typeof CatalogService>, agents, calls };
}

async function setup(options: { maxAsyncRuns?: number } = {}) {
  const store = createMemoryStore();
  const runs = runCollection(store);
  const bus = createMemoryBus();
  await bus.ensureStream(RUNS_STREAM);
  await bus.ensureConsumer({ stream: RUNS_STREAM.name, durable: "observer", filterSubject: "runs.>" });
  const published: { subject: string; payload: Record<string, unknown> }[] = [];
  const observed = {
    ...bus,
    async publish(subject: string, payload: string | Uint8Array, options?: { msgId?: string }) {
      published.push({ subject, payload: JSON.parse(String(payload)) });
      return bus.publish(subject, payload, options);
    },
  };
  const logger = createLogger({ name: "test", level: "silent" });
  const outbox = createRunEventOutbox(runs, runEventIntentCollection(store), observed, logger, { relayAfterMs: 0 });
  const fake = fakeProvider();
  const models = createProviderRegistry(
    { openai: {}, compatible: [], defaultModel: "fake/default", timeoutMs: 1_000, maxRetries: 0 },
    { providers: [fake.provider], models: MODELS },
  );
  const catalog = fakeCatalog();
  catalog.agents.set("agt_a", {
    organizationId: ORG_A,
    published: "av_1",
    versions: {
      av_1: { workflow: WORKFLOW, steps: STEPS },
      // Version 2 needs a new input.
      av_2: {
        workflow: { ...WORKFLOW, inputSchema: { ...INPUT_SCHEMA, required: ["text", "city", "language"] } },
        steps: STEPS,
      },
    },
  });
  const leases = createRunLeases(runs);
  const agents = createAgentRunner({
    runs,
    outbox,
    leases,
    catalog: catalog.client,
    identityAuth: identity,
    models,
    tools: createToolExecutor({ allowlist: { hosts: [] } }),
    validator: createInputValidator(),
    maxToolRounds: 2,
    logger,
    ...options,
  });
  return {
    agents,
    runs,
    catalog,
    fake,
    /** What reached the bus, once the background publishing of the runs stored so far is done. */
    async published() {
      await outbox.settled();
      return published;
    },
    async close() {
      await agents.drain();
      await outbox.stop();
      await bus.close();
      await store.close();
    },
  };
}

let t: Awaited<ReturnType<typeof setup>>;

beforeEach(async () => {
  t = await setup();
});

afterEach(async () => {
  await t.close();
});

const run = (inputs: unknown, extra: { async?: boolean; versionId?: string } = {}, ctx = asAlice) =>
  t.agents.runAgent(
    {
      organizationId: ORG_A,
      agentId: "agt_a",
      inputs: jsonText(inputs),
      versionId: extra.versionId ?? "",
      async: extra.async ?? false,
    },
    ctx,
  );

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

const stepsOf = (doc: { stepsJson: string }) => JSON.parse(doc.stepsJson) as Record<string, unknown>[];

describe("runAgent", () => {
  it("runs the workflow synchronously: child runs, sums, output, one run.completed per stored run", async () => {
    const doc = await run({ text: "hello", city: "Paris" });
    expect(doc).toMatchObject({
      _id: expect.stringMatching(/^arun_[0-9a-f]{32}$/),
      kind: "agent",
      organizationId: ORG_A,
      status: "succeeded",
      inputJson: '{"inputs":{"text":"hello","city":"Paris"}}',
      outputJson: JSON.stringify({ text: "answer: reply normal clear in Paris" }),
      agentId: "agt_a",
      agentVersionId: "av_1",
      // The tool step has no provider: the steps disagree.
      provider: null,
      model: null,
      usage: { inputTokens: 200, outputTokens: 100 },
      toolCallCount: 1,
      toolCallCounts: [{ toolKey: "weather", count: 1 }],
      error: null,
    });
    expect(doc.estimatedCostUsd).toBeCloseTo((2 * (100 * 1 + 50 * 2)) / 1e6, 12);
    const steps = stepsOf(doc);
    expect(steps.map((s) => [s.stepId, s.type, s.status, s.reused])).toEqual([
      ["classify", "prompt", "succeeded", false],
      ["weather", "tool", "succeeded", false],
      ["reply", "prompt", "succeeded", false],
    ]);
    expect(steps[1]).toMatchObject({
      input: { city: "Paris" },
      output: { text: '{"sky":"clear","temperatureC":21}', json: { sky: "clear", temperatureC: 21 } },
      toolCalls: [{ toolKey: "weather", toolVersionId: "tv_weather", input: { city: "Paris" } }],
      usage: { inputTokens: 0, outputTokens: 0 },
      estimatedCostUsd: 0,
    });
    expect(steps[1]?.runId).toBeUndefined();
    // Each prompt step stored a child prompt run with its own event.
    const childIds = [steps[0]?.runId, steps[2]?.runId];
    for (const id of childIds) {
      const child = await t.runs.findOne({ _id: id });
      expect(child).toMatchObject({ kind: "prompt", status: "succeeded", organizationId: ORG_A });
    }
    expect((await t.published()).map((p) => p.subject).sort()).toEqual([
      "runs.completed.agent",
      "runs.completed.prompt",
      "runs.completed.prompt",
    ]);
    expect((await t.published()).find((p) => p.subject === "runs.completed.agent")?.payload).toMatchObject({
      runId: doc._id,
      agentId: "agt_a",
      agentVersionId: "av_1",
    });
    expect(t.catalog.calls[0]).toMatchObject({ organizationId: ORG_A, agentId: "agt_a", versionId: "" });
  });

  it("takes the branch the JSON Logic condition picks", async () => {
    const doc = await run({ text: "urgent!", city: "Oslo" });
    expect(stepsOf(doc).map((s) => s.stepId)).toEqual(["classify", "escalate"]);
    // The output binding names reply, which this path did not run.
    expect(doc).toMatchObject({ status: "failed", error: { code: "no_output" }, outputJson: null });
  });

  it("refuses inputs that do not match the input schema, storing nothing", async () => {
    const error = await rejection(run({ text: "x" }));
    expect(error.kind).toBe("invalid_argument");
    expect(error.details).toEqual([{ field: "inputs.city", issue: "is required" }]);
    expect(await t.runs.countDocuments({})).toBe(0);
  });

  it("stores a failed run when a step fails", async () => {
    const broken = t.catalog.agents.get("agt_a");
    if (!broken) throw new Error("fixture");
    broken.versions.av_1 = {
      workflow: WORKFLOW,
      steps: STEPS.map(
        (s): StepInit =>
          s.stepId === "weather" && s.tool
            ? {
                stepId: s.stepId,
                tool: {
                  ...(s.tool as object),
                  content: { ...(s.tool.content as object), config: { json: '{"result":"not an object"}' } },
                },
              }
            : s,
      ),
    };
    const doc = await run({ text: "hello", city: "Paris" });
    expect(doc.status).toBe("failed");
    expect(doc.error?.code).toBe("invalid_tool_config");
    expect(stepsOf(doc).map((s) => [s.stepId, s.status])).toEqual([
      ["classify", "succeeded"],
      ["weather", "failed"],
    ]);
  });

  it("async: answers a running record at once, then stores the finished run and publishes its event", async () => {
    const started = await run({ text: "hello", city: "Paris" }, { async: true });
    expect(started).toMatchObject({ kind: "agent", status: "running", outputJson: null, stepsJson: "[]" });
    await t.agents.drain();
    const done = await t.runs.findOne({ _id: started._id });
    expect(done).toMatchObject({ status: "succeeded", agentVersionId: "av_1" });
    expect(stepsOf(done ?? { stepsJson: "[]" })).toHaveLength(3);
    expect((await t.published()).filter((p) => p.subject === "runs.completed.agent")).toHaveLength(1);
  });

  it("async: refuses a run past the process's cap with resource_exhausted, and takes one again once a slot is free", async () => {
    await t.close();
    t = await setup({ maxAsyncRuns: 2 });
    const started = await Promise.allSettled(
      [1, 2, 3].map(() => run({ text: "hello", city: "Paris" }, { async: true })),
    );
    expect(started.map((s) => s.status).sort()).toEqual(["fulfilled", "fulfilled", "rejected"]);
    const refused = started.find((s) => s.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ kind: "resource_exhausted" });
    await t.agents.drain();
    expect((await run({ text: "hello", city: "Paris" }, { async: true })).status).toBe("running");
  });

  it("refuses another organization's caller", async () => {
    expect((await rejection(run({ text: "x", city: "y" }, {}, asMallory))).kind).toBe("not_found");
    expect((await rejection(run({ text: "x", city: "y" }, {}, readOnlyKeyOfA))).kind).toBe("permission_denied");
  });
});

describe("rerunFromStep", () => {
  it("reuses the steps before stepId without cost and runs from there with new inputs", async () => {
    const first = await run({ text: "hello", city: "Paris" });
    const before = t.fake.requests.length;
    const rerun = await t.agents.rerunFromStep(
      { runId: first._id, stepId: "weather", inputs: jsonText({ text: "hello", city: "Rome" }) },
      asAlice,
    );
    expect(rerun).toMatchObject({
      kind: "agent",
      status: "succeeded",
      parentRunId: first._id,
      rerunFromStepId: "weather",
      agentVersionId: "av_1",
      inputJson: '{"inputs":{"text":"hello","city":"Rome"}}',
      outputJson: JSON.stringify({ text: "answer: reply normal clear in Rome" }),
      // Only reply called the model.
      usage: { inputTokens: 100, outputTokens: 50 },
    });
    expect(t.fake.requests.length - before).toBe(1);
    const steps = stepsOf(rerun);
    expect(steps.map((s) => [s.stepId, s.reused])).toEqual([
      ["classify", true],
      ["weather", false],
      ["reply", false],
    ]);
    expect(steps[0]).toMatchObject({
      output: stepsOf(first)[0]?.output,
      usage: { inputTokens: 0, outputTokens: 0 },
      estimatedCostUsd: 0,
      toolCalls: [],
    });
    expect(steps[0]?.runId).toBeUndefined();
    expect(t.catalog.calls.at(-1)).toMatchObject({ versionId: "av_1" });
  });

  it("keeps the original inputs when none are given", async () => {
    const first = await run({ text: "hello", city: "Paris" });
    const rerun = await t.agents.rerunFromStep({ runId: first._id, stepId: "reply" }, asAlice);
    expect(rerun.inputJson).toBe(first.inputJson);
    expect(rerun.outputJson).toBe(first.outputJson);
  });

  it("refuses a step the run never executed, unknown runs and other organizations", async () => {
    const first = await run({ text: "hello", city: "Paris" });
    const error = await rejection(t.agents.rerunFromStep({ runId: first._id, stepId: "escalate" }, asAlice));
    expect(error).toMatchObject({
      kind: "invalid_argument",
      details: [{ field: "stepId", issue: expect.any(String) }],
    });
    expect((await rejection(t.agents.rerunFromStep({ runId: "arun_nope", stepId: "reply" }, asAlice))).kind).toBe(
      "not_found",
    );
    expect((await rejection(t.agents.rerunFromStep({ runId: first._id, stepId: "reply" }, asMallory))).kind).toBe(
      "not_found",
    );
    expect((await rejection(t.agents.rerunFromStep({ runId: first._id, stepId: "reply" }, keyOfB))).kind).toBe(
      "not_found",
    );
  });
});

describe("loadInputs", () => {
  it("checks the run's inputs against the published or a named version", async () => {
    const first = await run({ text: "hello", city: "Paris" });
    expect(await t.agents.loadInputs({ runId: first._id, versionId: "" }, asAlice)).toEqual({
      agentId: "agt_a",
      agentVersionId: "av_1",
      inputs: { text: "hello", city: "Paris" },
      valid: true,
      errors: [],
    });
    expect(await t.agents.loadInputs({ runId: first._id, versionId: "av_2" }, asAlice)).toMatchObject({
      agentVersionId: "av_2",
      valid: false,
      errors: [{ path: "inputs.language", code: "required", message: "inputs.language is required" }],
    });
    expect((await rejection(t.agents.loadInputs({ runId: first._id, versionId: "" }, asMallory))).kind).toBe(
      "not_found",
    );
  });
});

describe("compare", () => {
  it("aligns steps by id with outputs compared, and totals per run", async () => {
    const a = await run({ text: "hello", city: "Paris" });
    const b = await t.agents.rerunFromStep(
      { runId: a._id, stepId: "weather", inputs: jsonText({ text: "hello", city: "Rome" }) },
      asAlice,
    );
    const c = await t.agents.compare({ runIds: [a._id, b._id] }, asAlice);
    expect(c.runs.map((r) => r.id)).toEqual([a._id, b._id]);
    expect(c.steps.map((s) => [s.stepId, s.outputsEqual])).toEqual([
      ["classify", true],
      ["weather", true],
      ["reply", false],
    ]);
    expect(c.steps[2]?.byRun[b._id]).toMatchObject({ status: "succeeded", usage: { inputTokens: 100 } });
    expect(c.totals[a._id]).toMatchObject({ usage: { inputTokens: 200, outputTokens: 100 } });
    expect(c.totals[b._id]).toMatchObject({ usage: { inputTokens: 100, outputTokens: 50 } });
  });

  it("marks a step only one run executed, and refuses bad id lists", async () => {
    const a = await run({ text: "hello", city: "Paris" });
    const b = await run({ text: "urgent", city: "Paris" });
    const c = await t.agents.compare({ runIds: [a._id, b._id] }, asAlice);
    const escalate = c.steps.find((s) => s.stepId === "escalate");
    expect(escalate).toMatchObject({ outputsEqual: false, byRun: { [a._id]: null } });
    expect((await rejection(t.agents.compare({ runIds: [a._id] }, asAlice))).kind).toBe("invalid_argument");
    expect((await rejection(t.agents.compare({ runIds: [a._id, a._id] }, asAlice))).kind).toBe("invalid_argument");
    expect((await rejection(t.agents.compare({ runIds: [a._id, "arun_nope"] }, asAlice))).kind).toBe("not_found");
    expect((await rejection(t.agents.compare({ runIds: [a._id, b._id] }, asMallory))).kind).toBe("not_found");
  });
});
