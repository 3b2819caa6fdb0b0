import { randomUUID } from "node:crypto";
import { loadProvidersConfig } from "@kiln/execution/config";
import { createLogger } from "@kiln/kit/logger";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { buildTestPlatform } from "@kiln/testing/platform";
import { createTestClient, type ErrorBody, type TestClient, type TestResponse } from "@kiln/testing/test-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

/**
 * Prompt and skill runs through the REST gateway of the embedded platform (api.md "Runs",
 * "Prompts", "Skills", "Conventions"), with the real OpenAI provider (the `openai` SDK) talking to a
 * local Chat Completions stub: what the model is sent, what runs record when it answers, fails or
 * hangs, and who may read a run.
 */

// biome-ignore lint/suspicious/noExplicitAny: run bodies are asserted field by field.
type Loose = any;

const STUB_KEY = "sk-test";
/** The provider deadline, retries included: short, so that a hanging stub is a quick provider_timeout. */
const PROVIDER_TIMEOUT_MS = 800;
const MAX_RETRIES = 2;
/** gpt-4o-mini list prices, USD per million tokens (model-catalog.ts). */
const PRICE = { input: 0.15, output: 0.6 };

type Embedded = Awaited<ReturnType<typeof buildTestPlatform>>;

interface Member {
  token: string;
  organizationId: string;
}

let stub: OpenAIStub;
let kiln: Embedded;
let api: TestClient;
let owner: Member;
let stranger: Member;

beforeAll(async () => {
  stub = await startOpenAIStub({ apiKey: STUB_KEY });
  kiln = await buildTestPlatform({
    logger: createLogger({ name: "test", level: "silent" }),
    providers: {
      ...loadProvidersConfig({}),
      openai: { apiKey: STUB_KEY, baseUrl: stub.baseUrl },
      timeoutMs: PROVIDER_TIMEOUT_MS,
      maxRetries: MAX_RETRIES,
    },
  });
  api = createTestClient(kiln.gateway.app);
  owner = await newMember();
  stranger = await newMember();
});

afterAll(async () => {
  await kiln?.close();
  await stub?.close();
});

beforeEach(() => {
  stub.reset();
});

async function newMember(): Promise<Member> {
  const user = await api.signUp();
  const onboarding = await api.onboard(user.accessToken);
  return { token: user.accessToken, organizationId: onboarding.organization.id };
}

/** The error envelope of api.md with this status and code. */
function expectError(res: TestResponse, status: number, code: string): ErrorBody["error"] {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toEqual({
    error: { code, message: expect.any(String), details: expect.any(Array), requestId: res.headers["x-request-id"] },
  });
  return (res.body as ErrorBody).error;
}

const CITY_SCHEMA = {
  type: "object",
  properties: { city: { type: "string", minLength: 1 } },
  required: ["city"],
};

const FORECAST_SCHEMA = {
  type: "object",
  properties: { summary: { type: "string" } },
  required: ["summary"],
};

/** A published prompt run by gpt-4o-mini through the stub. */
async function openaiPrompt(extra: Record<string, unknown> = {}) {
  return api.createPublishedPrompt(owner.token, owner.organizationId, {
    systemPrompt: "Forecast for {{city}}.",
    variablesSchema: CITY_SCHEMA,
    model: "openai/gpt-4o-mini",
    ...extra,
  });
}

/** A published skill of one gpt-4o-mini step (it is the draft too: preview runs the published one). */
async function openaiSkill() {
  const { prompt } = await openaiPrompt();
  const skill = await api.createSkill(owner.token, owner.organizationId, { name: `Skill ${randomUUID().slice(0, 8)}` });
  await api.replaceSkillPrompts(owner.token, skill.draftVersionId ?? "", [{ promptId: prompt.id, alias: "forecast" }]);
  const published = await api.publishSkill(owner.token, skill.id);
  return { skillId: skill.id, skillVersionId: published.publishedVersionId ?? "", promptId: prompt.id };
}

const runPrompt = (promptId: string, body: Record<string, unknown>, token = owner.token) =>
  api.post<Loose>(`/api/prompts/${promptId}/run`, { organizationId: owner.organizationId, ...body }, { token });

describe("prompt runs with the OpenAI provider", () => {
  it("runs an openai/gpt-4o-mini version through the SDK: messages, response_format, tools, tool results, cost", async () => {
    const tool = await api.createTool(owner.token, owner.organizationId, {
      description: "Current weather of a city",
      config: { result: { temperatureC: 21, sky: "clear" } },
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
    const { prompt, version } = await openaiPrompt({
      developerPrompt: "Answer in {{units}} units.",
      variablesSchema: {
        type: "object",
        properties: { city: { type: "string" }, units: { type: "string" } },
        required: ["city", "units"],
      },
      responseFormat: { type: "json_schema", name: "forecast", schema: FORECAST_SCHEMA },
      temperature: 0.2,
      maxOutputTokens: 300,
      tools: [tool.id],
    });
    stub.script(
      stubReply.toolCalls([{ id: "call_w1", name: tool.toolKey, arguments: { city: "Paris" } }], {
        usage: { prompt_tokens: 1_200, completion_tokens: 30 },
      }),
      stubReply.json({ summary: "Sunny, 21 °C" }, { usage: { prompt_tokens: 1_500, completion_tokens: 400 } }),
    );

    const res = await runPrompt(prompt.id, { variables: { city: "Paris", units: "metric" } });

    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^run_[0-9a-f]{32}$/),
      kind: "prompt",
      organizationId: owner.organizationId,
      status: "succeeded",
      input: { variables: { city: "Paris", units: "metric" } },
      output: { text: '{"summary":"Sunny, 21 °C"}', json: { summary: "Sunny, 21 °C" } },
      provider: "openai",
      model: "openai/gpt-4o-mini",
      usage: { inputTokens: 2_700, outputTokens: 430 },
      toolCallCount: 1,
      toolCallCounts: { [tool.toolKey]: 1 },
      promptId: prompt.id,
      promptVersionId: version.id,
    });
    expect(res.body.error).toBeUndefined();
    expect(res.body.estimatedCostUsd).toBeCloseTo((2_700 * PRICE.input + 430 * PRICE.output) / 1e6, 12);
    expect(res.body.toolCalls).toEqual([
      {
        toolKey: tool.toolKey,
        toolVersionId: tool.currentVersionId,
        input: { city: "Paris" },
        output: { temperatureC: 21, sky: "clear" },
        latencyMs: expect.any(Number),
      },
    ]);

    // What the OpenAI endpoint received.
    expect(stub.requests).toHaveLength(2);
    const [first, second] = stub.requests;
    expect(first?.path).toBe("/v1/chat/completions");
    expect(first?.headers.authorization).toBe(`Bearer ${STUB_KEY}`);
    expect(first?.body).toMatchObject({
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "Forecast for Paris." },
        { role: "developer", content: "Answer in metric units." },
      ],
      response_format: {
        type: "json_schema",
        json_schema: { name: "forecast", schema: FORECAST_SCHEMA, strict: false },
      },
      tools: [
        {
          type: "function",
          function: {
            name: tool.toolKey,
            description: "Current weather of a city",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          },
        },
      ],
      temperature: 0.2,
      max_completion_tokens: 300,
    });
    expect(first?.body.messages).toHaveLength(2);
    // The second turn carries the model's tool call and the tool's result.
    expect(second?.body.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_w1", type: "function", function: { name: tool.toolKey, arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_w1", content: '{"temperatureC":21,"sky":"clear"}' },
    ]);
  });

  it("runs the request's model over the version's, and the version's over the default", async () => {
    const { prompt } = await openaiPrompt();
    stub.script(
      stubReply.text("a", { usage: { prompt_tokens: 1_000_000, completion_tokens: 0 } }),
      stubReply.text("b"),
    );
    const requested = await runPrompt(prompt.id, { variables: { city: "Oslo" }, model: "openai/gpt-4o" });
    expect(requested.status, requested.text).toBe(201);
    expect(requested.body).toMatchObject({ model: "openai/gpt-4o", provider: "openai", output: { text: "a" } });
    // A million input tokens at gpt-4o's $2.50.
    expect(requested.body.estimatedCostUsd).toBeCloseTo(2.5, 9);
    const pinned = await runPrompt(prompt.id, { variables: { city: "Oslo" } });
    expect(pinned.body.model).toBe("openai/gpt-4o-mini");
    expect(stub.requests.map((r) => r.body.model)).toEqual(["gpt-4o", "gpt-4o-mini"]);
    // Without a model anywhere: the deployment's default, local/echo, which never calls the stub.
    const { prompt: plain } = await api.createPublishedPrompt(owner.token, owner.organizationId, {
      systemPrompt: "Hello {{city}}",
      variablesSchema: CITY_SCHEMA,
    });
    const byDefault = await runPrompt(plain.id, { variables: { city: "Oslo" } });
    expect(byDefault.body).toMatchObject({ model: "local/echo", provider: "local", estimatedCostUsd: 0 });
    expect(stub.requests).toHaveLength(2);
  });

  it("stores a failed run (201, provider_error) when the provider answers 500 beyond the retries", async () => {
    const { prompt } = await openaiPrompt();
    stub.script(...stubReply.times(MAX_RETRIES + 1, stubReply.serverError({ retryAfterMs: 5 })));
    const res = await runPrompt(prompt.id, { variables: { city: "Paris" } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^run_/),
      status: "failed",
      output: null,
      provider: "openai",
      model: "openai/gpt-4o-mini",
      usage: { inputTokens: 0, outputTokens: 0 },
      error: { code: "provider_error", message: expect.any(String) },
    });
    expect(res.body.error.message).not.toContain(STUB_KEY);
    expect(stub.requests).toHaveLength(MAX_RETRIES + 1);
  });

  it("stores a failed run (201, provider_timeout) when the provider hangs past the provider timeout", async () => {
    const { prompt } = await openaiPrompt();
    stub.script(stubReply.hang());
    const started = performance.now();
    const res = await runPrompt(prompt.id, { variables: { city: "Paris" } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: "failed", output: null, error: { code: "provider_timeout" } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(PROVIDER_TIMEOUT_MS - 50);
  });

  it("counts calls of a tool whose toolKey is __proto__ as data", async () => {
    const tool = await api.createTool(owner.token, owner.organizationId, { toolKey: "__proto__" });
    const other = await api.createTool(owner.token, owner.organizationId);
    // local/echo calls every offered tool once.
    const { prompt } = await api.createPublishedPrompt(owner.token, owner.organizationId, {
      systemPrompt: "Hello {{city}}",
      variablesSchema: CITY_SCHEMA,
      tools: [tool.id, other.id],
    });
    const res = await runPrompt(prompt.id, { variables: { city: "Oslo" } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.toolCallCount).toBe(2);
    expect(res.body.toolCalls.map((c: Loose) => c.toolKey)).toEqual(["__proto__", other.toolKey]);
    expect(res.text).toContain(`"toolCallCounts":{"__proto__":1,"${other.toolKey}":1}`);
    expect(Object.getPrototypeOf(res.body.toolCallCounts)).toBe(Object.prototype);
  });

  it("refuses an unknown model with 400 on model and never calls the provider", async () => {
    const { prompt } = await openaiPrompt();
    const res = await runPrompt(prompt.id, { variables: { city: "Paris" }, model: "nope/none" });
    const error = expectError(res, 400, "invalid_argument");
    expect(error.details).toContainEqual({ field: "model", issue: expect.any(String) });
    const bad = await runPrompt(prompt.id, { variables: { city: "" } });
    expect(expectError(bad, 400, "invalid_argument").details.map((d) => d.field)).toEqual(["variables.city"]);
    expect(stub.requests).toHaveLength(0);
  });
});

describe("skill runs and previews with the OpenAI provider", () => {
  let skill: Awaited<ReturnType<typeof openaiSkill>>;

  beforeAll(async () => {
    skill = await openaiSkill();
  });

  const preview = (input: unknown, headers: Record<string, string> = {}) =>
    api.post<Loose>(
      `/api/skills/${skill.skillId}/preview`,
      { organizationId: owner.organizationId, input },
      { token: owner.token, headers },
    );

  const runSkill = (input: unknown, headers: Record<string, string> = {}) =>
    api.post<Loose>(
      `/api/skills/${skill.skillId}/run`,
      { organizationId: owner.organizationId, input },
      { token: owner.token, headers },
    );

  it("previews with the model's answer and preview: true, id null", async () => {
    stub.script(stubReply.text("Rain", { usage: { prompt_tokens: 100, completion_tokens: 10 } }));
    const res = await preview({ city: "Paris" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: null,
      preview: true,
      kind: "skill",
      status: "succeeded",
      output: { text: "Rain" },
      provider: "openai",
      model: "openai/gpt-4o-mini",
      skillId: skill.skillId,
    });
    expect(res.body.estimatedCostUsd).toBeCloseTo((100 * PRICE.input + 10 * PRICE.output) / 1e6, 12);
    expect(res.body.steps.map((s: Loose) => [s.stepId, s.status])).toEqual([["forecast", "succeeded"]]);
  });

  it("answers a preview whose model fails 502 provider_error", async () => {
    stub.script(...stubReply.times(MAX_RETRIES + 1, stubReply.serverError({ retryAfterMs: 5 })));
    const res = await preview({ city: "Paris" });
    const error = expectError(res, 502, "provider_error");
    expect(error.message).not.toContain(STUB_KEY);
  });

  it("answers a preview whose model hangs 504 provider_timeout", async () => {
    stub.script(stubReply.hang());
    expectError(await preview({ city: "Paris" }), 504, "provider_timeout");
  });

  it("stores a skill run whose model failed as a failed run (201) that reads back", async () => {
    stub.script(...stubReply.times(MAX_RETRIES + 1, stubReply.serverError({ retryAfterMs: 5 })));
    const res = await runSkill({ city: "Paris" });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^srun_/),
      status: "failed",
      output: null,
      error: { code: "provider_error" },
    });
    expect(res.body.steps).toMatchObject([{ stepId: "forecast", status: "failed", error: { code: "provider_error" } }]);
    const read = await api.get<Loose>(`/api/skill-runs/${res.body.id}`, { token: owner.token });
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it("replays a skill run retried with the same Idempotency-Key; another body is 400", async () => {
    stub.script(stubReply.text("Snow"));
    const headers = { "idempotency-key": `skill-${randomUUID()}` };
    const first = await runSkill({ city: "Paris" }, headers);
    const retry = await runSkill({ city: "Paris" }, headers);
    expect(first.status, first.text).toBe(201);
    expect(retry.status, retry.text).toBe(201);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(stub.requests).toHaveLength(1);
    const other = await runSkill({ city: "Lyon" }, headers);
    expectError(other, 400, "invalid_argument");
    expect(stub.requests).toHaveLength(1);
    // Keys are scoped to the route: the same key on a prompt run is a new request.
    const promptRun = await runPrompt(skill.promptId, { variables: { city: "Paris" } }).then(() =>
      api.post<Loose>(
        `/api/prompts/${skill.promptId}/run`,
        { organizationId: owner.organizationId, variables: { city: "Lyon" } },
        { token: owner.token, headers },
      ),
    );
    expect(promptRun.status, promptRun.text).toBe(201);
    expect(promptRun.headers["idempotent-replayed"]).toBeUndefined();
  });

  it("ignores Idempotency-Key on previews: each preview runs", async () => {
    stub.script(stubReply.text("one"), stubReply.text("two"));
    const headers = { "idempotency-key": `preview-${randomUUID()}` };
    const a = await preview({ city: "Paris" }, headers);
    const b = await preview({ city: "Lyon" }, headers);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body.output.text, b.body.output.text]).toEqual(["one", "two"]);
    expect(b.headers["idempotent-replayed"]).toBeUndefined();
    expect(stub.requests).toHaveLength(2);
  });
});

describe("skill bindings through the catalog", () => {
  it("runs bindings to input and output fields with any name the catalog accepts", async () => {
    // local/echo: text answers echo the rendered prompt; json_schema answers fill string fields with it.
    const first = await api.createPublishedPrompt(owner.token, owner.organizationId, {
      systemPrompt: "Weather in {{city}}",
      variablesSchema: CITY_SCHEMA,
      responseFormat: {
        type: "json_schema",
        name: "w",
        schema: { type: "object", properties: { "prix-€": { type: "string" } }, required: ["prix-€"] },
      },
    });
    const second = await api.createPublishedPrompt(owner.token, owner.organizationId, {
      systemPrompt: "Given {{note}} for {{place}}",
      variablesSchema: {
        type: "object",
        properties: { note: { type: "string" }, place: { type: "string" } },
        required: ["note", "place"],
      },
    });
    const skill = await api.createSkill(owner.token, owner.organizationId);
    await api.replaceSkillPrompts(owner.token, skill.draftVersionId ?? "", [
      { promptId: first.prompt.id, alias: "w", variables: { city: "{{input.ville-été}}" } },
      {
        promptId: second.prompt.id,
        alias: "a",
        variables: { note: "{{steps.w.output.prix-€}}", place: "{{ input.$lieu }}" },
      },
    ]);
    await api.publishSkill(owner.token, skill.id);
    const res = await api.post<Loose>(
      `/api/skills/${skill.id}/run`,
      { organizationId: owner.organizationId, input: { "ville-été": "Nice", $lieu: "the coast" } },
      { token: owner.token },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.status).toBe("succeeded");
    expect(res.body.steps.map((s: Loose) => s.input)).toEqual([
      { city: "Nice" },
      { note: "Weather in Nice", place: "the coast" },
    ]);
    expect(res.body.output.text).toBe("Given Weather in Nice for the coast");
  });
});

describe("skills without steps", () => {
  it("answers run and preview of an empty draft 409 failed_precondition", async () => {
    const skill = await api.createSkill(owner.token, owner.organizationId);
    const body = { organizationId: owner.organizationId, input: {}, versionId: skill.draftVersionId };
    const preview = await api.post(`/api/skills/${skill.id}/preview`, body, { token: owner.token });
    expect(expectError(preview, 409, "failed_precondition").details).toEqual([
      { field: "promptComposition", issue: "is empty" },
    ]);
    const run = await api.post(`/api/skills/${skill.id}/run`, body, { token: owner.token });
    expectError(run, 409, "failed_precondition");
  });
});

describe("GET /api/skill-runs/:id", () => {
  let runId: string;
  let body: Loose;

  beforeAll(async () => {
    const { skillId } = await openaiSkill();
    stub.script(stubReply.text("Fog"));
    const res = await api.post<Loose>(
      `/api/skills/${skillId}/run`,
      { organizationId: owner.organizationId, input: { city: "Paris" } },
      { token: owner.token },
    );
    expect(res.status, res.text).toBe(201);
    runId = res.body.id;
    body = res.body;
  });

  it("reads the run with a key holding runs:read", async () => {
    const key = await api.createApiKey(owner.token, owner.organizationId, ["runs:read"]);
    const res = await api.get<Loose>(`/api/skill-runs/${runId}`, { token: key.key });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual(body);
    expect(res.headers["x-api-stability"]).toBe("beta");
  });

  it("refuses a key of the organization without runs:read (403)", async () => {
    const key = await api.createApiKey(owner.token, owner.organizationId, ["runs:write", "skills:read"]);
    expectError(await api.get(`/api/skill-runs/${runId}`, { token: key.key }), 403, "permission_denied");
  });

  it("does not find the run for another organization's user or key (404)", async () => {
    expectError(await api.get(`/api/skill-runs/${runId}`, { token: stranger.token }), 404, "not_found");
    const key = await api.createApiKey(stranger.token, stranger.organizationId, ["runs:read"]);
    expectError(await api.get(`/api/skill-runs/${runId}`, { token: key.key }), 404, "not_found");
  });

  it("does not find a prompt run or an unknown id under /api/skill-runs (404)", async () => {
    const { prompt } = await openaiPrompt();
    stub.script(stubReply.text("x"));
    const promptRun = await runPrompt(prompt.id, { variables: { city: "Paris" } });
    expect(promptRun.status).toBe(201);
    expectError(await api.get(`/api/skill-runs/${promptRun.body.id}`, { token: owner.token }), 404, "not_found");
    expectError(await api.get(`/api/skill-runs/srun_${"0".repeat(32)}`, { token: owner.token }), 404, "not_found");
  });
});
