/**
 * The TypeScript SDK (sdk/) against a live embedded platform over real HTTP: every method of every
 * family, error answers as KilnError, pagination and Idempotency-Key. Every answer passes through
 * the OpenAPI conformance checker, so this file also checks the document against what the routes
 * really return, and that every documented operation was exercised.
 */
import { randomUUID } from "node:crypto";
import { loadProvidersConfig } from "@kiln/execution/config";
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { type Agent, type Assertion, Kiln, KilnError, type Prompt, type Workflow } from "@kiln/sdk";
import { AGENT_INPUT_SCHEMA } from "@kiln/testing/agent-fixture";
import { type OpenAIStub, startOpenAIStub } from "@kiln/testing/openai-stub";
import { type SamlTestIdp, startSamlTestIdp } from "@kiln/testing/saml-idp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";
import { createConformanceChecker, type OpenApiDocument } from "./support/openapi-conformance.js";

const PASSWORD = "correct-horse-battery";
const KEY_SCOPES = [
  "prompts:read",
  "prompts:write",
  "skills:read",
  "runs:read",
  "runs:write",
  "evaluations:read",
  "evaluations:write",
];

let kiln: EmbeddedKiln;
let stub: OpenAIStub;
let baseUrl: string;
let conformance: ReturnType<typeof createConformanceChecker>;
/** A signed-in user's client, its organization, an API key's client. */
let user: Kiln;
let organizationId: string;
let accessToken: string;
let keyed: Kiln;
const email = `sdk-${randomUUID()}@example.test`;

/** A non-public route (sign-up, keys, JWKS): plain fetch, through the conformance checker. */
async function raw<T>(method: string, path: string, body?: unknown, token?: string) {
  const response = await conformance.fetch(
    new Request(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  return { status: response.status, body: (await response.json()) as T };
}

/** The KilnError a call fails with (the test fails when it succeeds or fails otherwise). */
async function failureOf(call: PromiseLike<unknown>): Promise<KilnError> {
  const error = await Promise.resolve(call).then(
    () => new Error("expected the call to fail"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KilnError);
  return error as KilnError;
}

const client = (credential: { accessToken: string } | { apiKey: string }) =>
  new Kiln({ baseUrl, ...credential, fetch: conformance.fetch });

beforeAll(async () => {
  // A slow model, for an evaluation run that is still running when it is cancelled.
  stub = await startOpenAIStub({ latencyMs: 100 });
  ({ kiln, baseUrl } = await startEmbedded({
    // Webhooks may call 127.0.0.1 here (port 9: nothing listens, the attempt fails at once).
    webhooks: { privateHosts: parseHostPatterns("127.0.0.1") },
    connections: { privateHosts: parseHostPatterns("127.0.0.1") },
    providers: loadProvidersConfig({
      OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
        { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "slow", inputPerMTokUsd: 0, outputPerMTokUsd: 0 }] },
      ]),
    }),
  }));
  const doc = (await (await fetch(`${baseUrl}/api/openapi.json`)).json()) as OpenApiDocument;
  conformance = createConformanceChecker(doc);
  await raw("GET", "/api/openapi.json");

  const signUp = await raw<{ accessToken: string }>("POST", "/api/auth/signup", {
    email,
    password: PASSWORD,
    fullName: "Ada",
  });
  expect(signUp.status).toBe(201);
  accessToken = signUp.body.accessToken;
  user = client({ accessToken });
  const onboarded = await user.onboarding.complete({ fullName: "Ada Lovelace", organizationName: "Engines" });
  organizationId = onboarded.organization.id;
  const key = await raw<{ key: string }>(
    "POST",
    "/api/api-keys",
    { organizationId, name: "sdk", scopes: KEY_SCOPES },
    accessToken,
  );
  expect(key.status).toBe(201);
  keyed = client({ apiKey: key.body.key });
});

afterAll(async () => {
  await kiln?.close();
  await stub?.close();
});

describe("the Kiln client", () => {
  it("refuses a bad configuration with a clear error", () => {
    expect(() => new Kiln({ baseUrl: "localhost:8080", accessToken: "t" })).toThrow(/baseUrl must be an absolute URL/);
    expect(() => new Kiln({ baseUrl })).toThrow(/exactly one of accessToken, apiKey and cookieSession/);
    expect(() => new Kiln({ baseUrl, accessToken: "t", apiKey: "k" })).toThrow(/exactly one/);
    expect(() => new Kiln({ baseUrl, accessToken: "t", timeoutMs: -1 })).toThrow(/timeoutMs must be a number/);
  });
});

describe("onboarding, setup and models", () => {
  it("onboards once: a repeat answers the same organization", async () => {
    const again = await user.onboarding.complete({ fullName: "Ada Lovelace", organizationName: "Engines" });
    expect(again.organization).toMatchObject({ id: organizationId, plan: "free", entitlements: { aiEnabled: true } });
    expect(again.membership.role).toBe("owner");
  });

  it("verifies the setup with an access token and with an API key", async () => {
    const byUser = await user.setup.verify({ organizationId });
    expect(byUser.ok).toBe(true);
    expect(byUser.principal.type).toBe("user");
    expect(byUser.checks.map((c) => c.name)).toEqual([
      "authentication",
      "organization",
      "ai_entitlement",
      "ai_permission",
    ]);
    const byKey = await keyed.setup.verify();
    expect(byKey).toMatchObject({
      ok: true,
      principal: { type: "api_key", scopes: KEY_SCOPES },
      organization: { id: organizationId },
    });
  });

  it("lists the models, local/echo available", async () => {
    const models = await keyed.models.list();
    expect(models.nextCursor).toBeNull();
    expect(models.data).toContainEqual(expect.objectContaining({ id: "local/echo", available: true }));
  });
});

describe("prompts", () => {
  let prompt: Prompt;

  it("creates, versions, publishes, reads and updates a prompt", async () => {
    prompt = await user.prompts.create({ organizationId, name: "Weather", description: "Says the weather" });
    expect(prompt).toMatchObject({ name: "Weather", latestVersion: 0, version: null, publishedVersionId: null });
    const version = await user.prompts.createVersion(prompt.id, {
      systemPrompt: "The weather in {{city}}.",
      variablesSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      responseFormat: { type: "text" },
      temperature: 0.2,
    });
    expect(version).toMatchObject({ promptId: prompt.id, version: 1, status: "draft", temperature: 0.2 });
    const published = await user.prompts.publish(prompt.id, { versionId: version.id });
    expect(published.publishedVersionId).toBe(version.id);
    const read = await keyed.prompts.get(prompt.id, { versionId: version.id });
    expect(read.version?.systemPrompt).toBe("The weather in {{city}}.");
    const renamed = await user.prompts.update(prompt.id, { name: "Weather report", defaultModel: "local/echo" });
    expect(renamed).toMatchObject({ name: "Weather report", defaultModel: "local/echo" });
  });

  it("runs a prompt; the same Idempotency-Key replays the stored run", async () => {
    const body = { organizationId, variables: { city: "Paris" } };
    const run = await keyed.prompts.run(prompt.id, body, { idempotencyKey: "weather-paris-1" });
    expect(run).toMatchObject({
      kind: "prompt",
      status: "succeeded",
      promptId: prompt.id,
      provider: "local",
      model: "local/echo",
    });
    expect(run.output?.text).toContain("The weather in Paris.");
    const replay = await keyed.prompts.run(prompt.id, body, { idempotencyKey: "weather-paris-1" });
    expect(replay.id).toBe(run.id);
    const other = await keyed.prompts.run(prompt.id, body);
    expect(other.id).not.toBe(run.id);
    const misuse = await failureOf(
      keyed.prompts.run(
        prompt.id,
        { organizationId, variables: { city: "Rome" } },
        { idempotencyKey: "weather-paris-1" },
      ),
    );
    expect(misuse).toMatchObject({ status: 400, code: "invalid_argument" });
  });

  it("streams a prompt run: start, the answer's pieces, then done with the stored run", async () => {
    const events = [];
    for await (const e of keyed.prompts.stream(prompt.id, { organizationId, variables: { city: "Paris" } })) {
      events.push(e);
    }
    const [start] = events;
    const done = events.at(-1);
    if (start?.type !== "start" || done?.type !== "done")
      throw new Error(`unexpected events ${JSON.stringify(events)}`);
    expect(done.run).toMatchObject({ id: start.runId, kind: "prompt", status: "succeeded", promptId: prompt.id });
    const streamed = events.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join("");
    expect(done.run.output?.text).toContain("The weather in Paris.");
    expect(streamed === "" || streamed === done.run.output?.text).toBe(true);
    const refused = await failureOf(keyed.prompts.stream(prompt.id, { organizationId, variables: { city: 1 } }).next());
    expect(refused).toMatchObject({ status: 400, code: "invalid_argument" });
  });

  it("labels a prompt's versions, runs by label, reads the history and removes a label", async () => {
    const v2 = await user.prompts.createVersion(prompt.id, {
      systemPrompt: "Staging weather in {{city}}.",
      variablesSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
    const staging = await user.prompts.labels.set(prompt.id, "staging", v2.id);
    expect(staging).toMatchObject({ label: "staging", versionId: v2.id, version: 2, protected: false });
    expect((await keyed.prompts.labels.list(prompt.id)).map((l) => l.label)).toEqual([
      "production",
      "latest",
      "staging",
    ]);
    const run = await keyed.prompts.run(prompt.id, { organizationId, variables: { city: "Oslo" }, label: "staging" });
    expect(run.promptVersionId).toBe(v2.id);
    const history = await user.prompts.labels.history(prompt.id, "staging");
    expect(history.data.map((m) => [m.action, m.versionId])).toEqual([["moved", v2.id]]);
    expect((await user.prompts.labels.delete(prompt.id, "staging")).versionId).toBe(v2.id);
    const diff = await keyed.prompts.diff(prompt.id, v2.id);
    expect(diff.changes).toContainEqual({
      op: "replace",
      path: "/messages/0/content",
      before: expect.any(String),
      after: "Staging weather in {{city}}.",
    });
  });

  it("pages through a list with limit and cursor, and iterates every item", async () => {
    for (const name of ["P1", "P2", "P3"]) await user.prompts.create({ organizationId, name });
    const first = await user.prompts.list({ organizationId, limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
    const names: string[] = [];
    for await (const p of user.prompts.list({ organizationId, limit: 2 })) names.push(p.name);
    expect(names).toEqual(["P3", "P2", "P1", "Weather report"]);
    const pages: number[] = [];
    for await (const page of keyed.prompts.list({ limit: 3 }).pages()) pages.push(page.data.length);
    expect(pages).toEqual([3, 1]);
  });

  it("lists folders and a folder's prompts, and resolves and runs a version with its partials", async () => {
    for (const name of ["kb/intro", "kb/howto/setup"]) await user.prompts.create({ organizationId, name });
    const top = await user.prompts.folders({ organizationId });
    expect(top.data.find((f) => f.path === "kb")).toEqual({
      path: "kb",
      name: "kb",
      parent: null,
      promptCount: 1,
      nestedPromptCount: 2,
      folderCount: 1,
    });
    const below = [];
    for await (const f of keyed.prompts.folders({ folder: "kb", nested: "true", limit: 1 })) below.push(f.path);
    expect(below).toEqual(["kb/howto"]);
    expect((await user.prompts.list({ organizationId, folder: "kb" })).data.map((p) => p.name)).toEqual(["kb/intro"]);
    expect((await keyed.prompts.list({ folder: "kb", nested: "true" })).data).toHaveLength(2);

    const tone = await user.prompts.create({ organizationId, name: "kb/tone" });
    const mood = { type: "object", properties: { mood: { type: "string" } } };
    const tv = await user.prompts.createVersion(tone.id, { systemPrompt: "Be {{mood}}.", variablesSchema: mood });
    await user.prompts.publish(tone.id, { versionId: tv.id });
    const main = await user.prompts.create({ organizationId, name: "kb/main", defaultModel: "local/echo" });
    const mv = await user.prompts.createVersion(main.id, {
      systemPrompt: "Hi {{who}}.\n{{> kb/tone}}",
      variablesSchema: { type: "object", properties: { who: { type: "string" }, mood: { type: "string" } } },
    });
    expect(mv.includes).toEqual([{ name: "kb/tone", label: "production" }]);
    await user.prompts.publish(main.id, { versionId: mv.id });
    const read = await keyed.prompts.get(main.id, { partials: "true" });
    expect(read.partials).toEqual([
      {
        name: "kb/tone",
        label: "production",
        promptId: tone.id,
        versionId: tv.id,
        version: 1,
        template: "Be {{mood}}.",
      },
    ]);
    const resolved = await keyed.prompts.resolve("kb/main", { cacheTtlMs: 0 });
    expect(resolved.render({ who: "Ada", mood: "kind" }).messages).toEqual([
      { role: "system", content: "Hi Ada.\nBe kind." },
    ]);
    const run = await keyed.prompts.run(main.id, { organizationId, variables: { who: "Ada", mood: "kind" } });
    expect(run.output?.text).toBe("Hi Ada.\nBe kind.");
  });
});

describe("tools", () => {
  it("creates, reads, updates, versions, diffs and lists a tool", async () => {
    const tool = await user.tools.create({
      organizationId,
      toolKey: "weather",
      name: "Weather",
      type: "manual_stub",
      config: { result: { sky: "clear" } },
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
    expect(tool).toMatchObject({ toolKey: "weather", latestVersion: 1, config: { result: { sky: "clear" } } });
    expect(await user.tools.get(tool.id)).toEqual(tool);
    expect((await user.tools.update(tool.id, { description: "Fixed weather" })).description).toBe("Fixed weather");
    const v2 = await user.tools.createVersion(tool.id, { config: { result: { sky: "rain" } } });
    expect(v2).toMatchObject({ toolId: tool.id, version: 2, type: "manual_stub" });
    const diff = await user.tools.diff(tool.id, v2.id);
    expect(diff.changes).toContainEqual({ op: "replace", path: "/config/result/sky", before: "clear", after: "rain" });
    const listed = await user.tools.list({ organizationId });
    expect(listed.data.map((t) => t.id)).toEqual([tool.id]);
    const clash = await failureOf(
      user.tools.create({
        organizationId,
        toolKey: "weather",
        name: "Again",
        type: "manual_stub",
        config: { result: {} },
        inputSchema: { type: "object" },
      }),
    );
    expect(clash).toMatchObject({ status: 409, code: "already_exists" });
  });
});

describe("the attach flow with skills, skill runs and evaluations", () => {
  let skillId: string;

  it("composes a skill with replacePrompts and replaceTools, previews, publishes, runs and diffs it", async () => {
    const forecast = await user.prompts.create({ organizationId, name: "Forecast" });
    const v = await user.prompts.createVersion(forecast.id, {
      systemPrompt: "Forecast for {{city}}.",
      variablesSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
    await user.prompts.publish(forecast.id, { versionId: v.id });
    const advice = await user.prompts.create({ organizationId, name: "Advice" });
    const a = await user.prompts.createVersion(advice.id, {
      systemPrompt: "Advice given: {{forecast}}",
      variablesSchema: { type: "object", properties: { forecast: { type: "string" } }, required: ["forecast"] },
    });
    await user.prompts.publish(advice.id, { versionId: a.id });

    const skill = await user.skills.create({ organizationId, name: "Trip planner" });
    skillId = skill.id;
    expect(skill.draftVersionId).toEqual(expect.any(String));
    const draft = skill.draftVersionId as string;
    const composed = await user.skills.replacePrompts(draft, {
      prompts: [
        { promptId: forecast.id, alias: "forecast" },
        { promptId: advice.id, alias: "advice", variables: { forecast: "{{steps.forecast.output}}" } },
      ],
    });
    expect(composed.promptComposition.map((s) => [s.order, s.alias, s.promptVersionId])).toEqual([
      [1, "forecast", v.id],
      [2, "advice", a.id],
    ]);
    const tool = (await user.tools.list({ organizationId })).data[0];
    const withTools = await user.skills.replaceTools(draft, { tools: [tool?.id ?? ""] });
    expect(withTools.tools.map((t) => t.toolKey)).toEqual(["weather"]);
    expect((await keyed.skills.get(skillId)).promptComposition).toHaveLength(2);

    const preview = await keyed.skills.preview(skillId, { input: { city: "Lyon" } });
    expect(preview).toMatchObject({ id: null, preview: true, kind: "skill", status: "succeeded" });
    expect(preview.steps.map((s) => s.stepId)).toEqual(["forecast", "advice"]);

    const published = await user.skills.publish(skillId);
    expect(published.publishedVersionId).toBe(draft);
    const run = await keyed.skills.run(skillId, { input: { city: "Lyon" } });
    expect(run).toMatchObject({ kind: "skill", status: "succeeded", skillVersionId: draft });
    expect(await keyed.skillRuns.get(run.id)).toEqual(run);

    const next = await user.skills.createVersion(skillId);
    expect(next).toMatchObject({ skillId, version: 2, status: "draft" });
    await user.skills.replacePrompts(next.id, { prompts: [{ promptId: forecast.id, alias: "forecast" }] });
    const diff = await user.skills.diff(skillId, next.id);
    expect(diff.from?.versionId).toBe(draft);
    expect(diff.changes.length).toBeGreaterThan(0);
    const renamed = await user.skills.update(skillId, { description: "Plans trips" });
    expect(renamed.description).toBe("Plans trips");
    expect((await user.skills.list({ organizationId })).data.map((s) => s.id)).toEqual([skillId]);
    const second = await failureOf(user.skills.createVersion(skillId));
    expect(second).toMatchObject({ status: 409, code: "failed_precondition" });
  });

  it("labels a skill's versions the same way", async () => {
    const [production] = await user.skills.labels.list(skillId);
    expect(production?.label).toBe("production");
    await user.skills.labels.set(skillId, "stable", production?.versionId ?? "");
    expect((await user.skills.labels.history(skillId, "stable")).data).toHaveLength(1);
    expect((await user.skills.labels.delete(skillId, "stable")).label).toBe("stable");
  });

  it("creates cases, runs an evaluation of draft and published versions and waits for its result", async () => {
    const assertions: Assertion[] = [{ type: "contains", value: "Lyon" }];
    const created = await keyed.evaluations.createCases(skillId, {
      cases: [
        { name: "Lyon", input: { city: "Lyon" }, assertions },
        { name: "Nice", input: { city: "Nice" }, expectedOutput: "never this" },
      ],
    });
    expect(created.data.map((c) => c.name)).toEqual(["Lyon", "Nice"]);
    const listed = [];
    for await (const c of keyed.evaluations.listCases(skillId, { limit: 1 })) listed.push(c.name);
    expect(listed.sort()).toEqual(["Lyon", "Nice"]);
    // A case is edited whole; a bad one is refused on its field and changes nothing.
    const nice = created.data[1]?.id ?? "";
    const edited = await keyed.evaluations.updateCase(skillId, nice, {
      name: "Nice (edited)",
      input: { city: "Nice" },
      expectedOutput: "still never this",
    });
    expect(edited).toMatchObject({ id: nice, name: "Nice (edited)", expectedOutput: "still never this" });
    const badEdit = await failureOf(
      keyed.evaluations.updateCase(skillId, nice, {
        input: { city: "Nice" },
        assertions: [{ type: "regex", pattern: "(" }],
      }),
    );
    expect(badEdit).toMatchObject({ status: 400, code: "invalid_argument" });
    expect(badEdit.details[0]?.field).toMatch(/^assertions/);
    const missing = await failureOf(
      keyed.evaluations.updateCase(skillId, "evc_00000000000000000000000000000000", { input: {} }),
    );
    expect(missing).toMatchObject({ status: 404, code: "not_found" });

    const started = await keyed.evaluations.run(skillId, { targets: ["draft", "published"] });
    expect(started).toEqual({ id: started.evaluationRunId, evaluationRunId: expect.any(String), status: "queued" });
    const result = await keyed.evaluations.waitForResult(skillId, started.evaluationRunId, { timeoutMs: 30_000 });
    expect(result.status).toBe("completed");
    expect(result.results).toHaveLength(2);
    expect(result.results[0]?.byTarget.published?.outcome).toBe("pass");
    expect(result.results[1]?.byTarget.published?.outcome).toBe("fail");
    expect(result.summary?.byTarget.published).toMatchObject({ passed: 1, failed: 1 });
    expect(result.contractValidity).toMatchObject({ valid: expect.any(Boolean) });
    expect(await keyed.evaluations.get(skillId, started.evaluationRunId)).toEqual(result);

    // Repeats, compare and cancel.
    const repeated = await keyed.evaluations.run(skillId, { targets: ["published"], repeats: 3 });
    const again = await keyed.evaluations.waitForResult(skillId, repeated.evaluationRunId, { timeoutMs: 30_000 });
    expect(again.repeats).toBe(3);
    expect(again.results[0]?.byTarget.published?.attempts).toHaveLength(3);
    expect(again.results[0]?.byTarget.published).toMatchObject({ passRate: 1, verdict: "passed" });
    const comparison = await keyed.evaluations.compare(skillId, {
      base: started.evaluationRunId,
      head: repeated.evaluationRunId,
    });
    expect(comparison.head).toMatchObject({ target: "published", repeats: 3 });
    expect(comparison.summary.changes).toMatchObject({ fixed: 0, regressed: 0 });
    const refused = await failureOf(keyed.evaluations.cancel(skillId, repeated.evaluationRunId));
    expect(refused).toMatchObject({ status: 409, code: "failed_precondition" });
    // A skill on the slow model: 20 attempts of 100 ms each are still running when it is cancelled.
    const slow = await user.prompts.create({ organizationId, name: "Slow" });
    const sv = await user.prompts.createVersion(slow.id, { systemPrompt: "Slowly.", model: "stub/slow" });
    await user.prompts.publish(slow.id, { versionId: sv.id });
    const slowSkill = await user.skills.create({ organizationId, name: "Slow skill" });
    await user.skills.replacePrompts(slowSkill.draftVersionId as string, { prompts: [{ promptId: slow.id }] });
    await keyed.evaluations.createCases(slowSkill.id, { cases: [{ input: {}, assertions }] });
    // An llm_judge on local/echo scores 0 (the schema's minimum): a threshold of 0 passes; its call is a stored run.
    const [graded] = (
      await keyed.evaluations.createCases(skillId, {
        cases: [
          { input: { city: "Oslo" }, assertions: [{ type: "llm_judge", rubric: "names the city", threshold: 0 }] },
        ],
      })
    ).data;
    const judgedRun = await keyed.evaluations.run(skillId, { targets: ["published"], caseIds: [graded?.id ?? ""] });
    const judged = await keyed.evaluations.waitForResult(skillId, judgedRun.evaluationRunId, { timeoutMs: 30_000 });
    const judgeRun = judged.results[0]?.byTarget.published?.judgeRuns[0];
    expect(judged.results[0]?.byTarget.published?.assertions[0]).toMatchObject({ type: "llm_judge", passed: true });
    expect(await keyed.judgeRuns.get(judgeRun?.runId ?? "")).toMatchObject({ kind: "judge", status: "succeeded" });

    const pending = await keyed.evaluations.run(slowSkill.id, { repeats: 20 });
    const cancelled = await keyed.evaluations.cancel(slowSkill.id, pending.evaluationRunId);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.summary?.text).toMatch(/^Cancelled: /);

    // The skill's runs, newest first a page at a time, without per-case results.
    const runs = [];
    for await (const r of keyed.evaluations.listRuns(skillId, { limit: 2 })) runs.push(r);
    expect(runs.map((r) => r.id)).toEqual([
      judgedRun.evaluationRunId,
      repeated.evaluationRunId,
      started.evaluationRunId,
    ]);
    expect(runs[1]).toMatchObject({ status: "completed", repeats: 3, summary: { text: again.summary?.text } });
    expect(runs[1]).not.toHaveProperty("results");
    // A deleted case is gone from the list; deleting it again is a 404.
    expect((await keyed.evaluations.deleteCase(skillId, nice)).name).toBe("Nice (edited)");
    const left = [];
    for await (const c of keyed.evaluations.listCases(skillId)) left.push(c.id);
    expect(left).not.toContain(nice);
    expect(await failureOf(keyed.evaluations.deleteCase(skillId, nice))).toMatchObject({ status: 404 });
  });
});

describe("agents and agent runs", () => {
  let agent: Agent;
  let workflow: Workflow;

  it("authors an agent: workflow, validation, publish, new version, diff, rollback", async () => {
    const note = await user.prompts.create({ organizationId, name: "Note" });
    const nv = await user.prompts.createVersion(note.id, {
      systemPrompt: "A note about {{topic}} in {{city}}.",
      variablesSchema: AGENT_INPUT_SCHEMA,
    });
    await user.prompts.publish(note.id, { versionId: nv.id });
    agent = await user.agents.create({ organizationId, name: "Notes" });
    expect(agent).toMatchObject({ workflow: {}, publishedVersionId: null });
    workflow = {
      inputSchema: AGENT_INPUT_SCHEMA,
      entry: "write",
      steps: [
        {
          id: "write",
          type: "prompt",
          ref: { promptId: note.id },
          input: { topic: "{{inputs.topic}}", city: "{{inputs.city}}" },
        },
      ],
      output: "{{steps.write.output}}",
    };
    const draftId = agent.draftVersionId as string;
    const invalid = await user.agents.validateWorkflow(draftId, { ...workflow, entry: "nowhere" });
    expect(invalid.valid).toBe(false);
    const saved = await user.agents.saveWorkflow(draftId, workflow);
    expect(saved.workflow).toEqual(workflow);
    expect((await user.agents.validateWorkflow(draftId)).valid).toBe(true);
    agent = await user.agents.publish(agent.id);
    expect(agent.publishedVersionId).toBe(draftId);
    expect((await user.agents.get(agent.id)).id).toBe(agent.id);
    agent = await user.agents.update(agent.id, { description: "Writes notes" });
    expect(agent.description).toBe("Writes notes");
    expect((await user.agents.list({ organizationId })).data.map((a) => a.id)).toEqual([agent.id]);

    const v2 = await user.agents.createVersion(agent.id);
    expect(v2).toMatchObject({ version: 2, status: "draft" });
    await user.agents.saveWorkflow(v2.id, { ...workflow, maxSteps: 5 });
    const diff = await user.agents.diff(agent.id, v2.id);
    expect(diff.changes).toContainEqual({ op: "add", path: "/workflow/maxSteps", after: 5 });
    const rolledBack = await user.agents.rollback(agent.id, draftId);
    expect(rolledBack.versions).toHaveLength(3);
    expect(rolledBack.publishedVersionId).not.toBe(draftId);
  });

  it("runs an agent synchronously and asynchronously, reruns from a step, loads inputs and compares runs", async () => {
    const inputs = { topic: "tea", city: "Kyoto" };
    const run = await keyed.agents.run(agent.id, { inputs });
    expect(run).toMatchObject({ kind: "agent", status: "succeeded", agentId: agent.id, steps: [{ stepId: "write" }] });
    expect(run.output?.text).toContain("A note about tea in Kyoto.");

    const started = await keyed.agents.run(agent.id, { inputs, mode: "async" });
    expect(started).toMatchObject({ status: "running", completedAt: null });
    const finished = await keyed.agentRuns.waitForCompletion(started.id, { timeoutMs: 20_000 });
    expect(finished.status).toBe("succeeded");
    expect(await keyed.agentRuns.get(run.id)).toEqual(run);

    const rerun = await keyed.agentRuns.rerunFromStep(run.id, {
      stepId: "write",
      inputs: { topic: "coffee", city: "Kyoto" },
    });
    expect(rerun).toMatchObject({ parentRunId: run.id, rerunFromStepId: "write" });
    expect(rerun.output?.text).toContain("coffee");
    const loaded = await keyed.agentRuns.loadInputs(run.id);
    expect(loaded).toMatchObject({ agentId: agent.id, inputs, validation: { valid: true, errors: [] } });
    const compared = await keyed.agentRuns.compare([run.id, rerun.id]);
    expect(compared.runs.map((r) => r.id)).toEqual([run.id, rerun.id]);
    expect(compared.steps[0]?.outputsEqual).toBe(false);
  });

  it("labels an agent's versions the same way", async () => {
    const labels = await user.agents.labels.list(agent.id);
    expect(labels.map((l) => l.label)).toEqual(["production", "latest"]);
    await user.agents.labels.set(agent.id, "stable", labels[0]?.versionId ?? "");
    expect((await user.agents.labels.history(agent.id, "production")).data[0]?.action).toBe("published");
    expect((await user.agents.labels.delete(agent.id, "stable")).label).toBe("stable");
  });
});

describe("errors as KilnError", () => {
  it("400 with field details and the request id", async () => {
    const error = await failureOf(
      user.prompts.create({ organizationId, name: "x", unknownField: 1 } as unknown as {
        organizationId: string;
        name: string;
      }),
    );
    expect(error).toMatchObject({ status: 400, code: "invalid_argument" });
    expect(error.details).toContainEqual({ field: "unknownField", issue: "is not allowed" });
    expect(error.requestId).toMatch(/^req_/);
    expect(error.message).toBe("the request is invalid");
    const limit = await failureOf(user.prompts.list({ organizationId, limit: 0 }));
    expect(limit).toMatchObject({ status: 400, code: "invalid_argument" });
    expect(limit.details.map((d) => d.field)).toEqual(["limit"]);
  });

  it("401 for a bad credential, 403 for a missing scope, 404 for an unknown id", async () => {
    const anonymous = client({ apiKey: "sk_nope_nope" });
    expect(await failureOf(anonymous.models.list())).toMatchObject({ status: 401, code: "unauthenticated" });
    expect(await failureOf(keyed.tools.list())).toMatchObject({ status: 403, code: "permission_denied" });
    expect(await failureOf(keyed.agentRuns.get("arun_unknown"))).toMatchObject({ status: 404, code: "not_found" });
    // A path parameter is encoded: "a/b" is one id, not two segments.
    const slashed = await failureOf(user.prompts.get("a/b"));
    expect(slashed).toMatchObject({ status: 404, code: "not_found" });
    expect(slashed.message).not.toMatch(/no route/);
  });

  it("409 for a state conflict: publishing a skill with nothing composed", async () => {
    const empty = await user.skills.create({ organizationId, name: "Empty" });
    const error = await failureOf(user.skills.publish(empty.id));
    expect(error).toMatchObject({ status: 409, code: "failed_precondition" });
  });
});

describe("the routes outside the SDK (non-public)", () => {
  it("token, JWKS, API key list and revocation", async () => {
    const token = await raw<{ accessToken: string }>("POST", "/api/auth/token", {
      email: "nobody@example.test",
      password: PASSWORD,
    });
    expect(token.status).toBe(401);
    const signedIn = await raw<{ accessToken: string }>("POST", "/api/auth/token", { email, password: PASSWORD });
    expect(signedIn.status).toBe(200);
    expect((await raw<{ keys: unknown[] }>("GET", "/.well-known/jwks.json")).body.keys.length).toBeGreaterThan(0);
    const keys = await raw<{ data: { id: string }[] }>(
      "GET",
      `/api/api-keys?organizationId=${organizationId}`,
      undefined,
      accessToken,
    );
    expect(keys.status).toBe(200);
    const spare = await raw<{ id: string }>(
      "POST",
      "/api/api-keys",
      { organizationId, name: "spare", scopes: ["runs:read"] },
      accessToken,
    );
    const limited = await raw<{ tokensPerMinute: number | null }>(
      "PATCH",
      `/api/api-keys/${spare.body.id}`,
      { tokensPerMinute: 40_000 },
      accessToken,
    );
    expect(limited.status).toBe(200);
    expect(limited.body.tokensPerMinute).toBe(40_000);
    const revoked = await raw<{ revokedAt: string | null }>(
      "DELETE",
      `/api/api-keys/${spare.body.id}`,
      undefined,
      accessToken,
    );
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    const signIn = await raw<{ accessToken: string }>("POST", "/api/auth/token", {
      email: "x@example.test",
      passwd: PASSWORD,
    });
    expect(signIn.status).toBe(400);
  });
});

describe("the console's cookie session (non-public)", () => {
  it("signs in to a cookie the SDK's cookieSession mode uses, and signs out", async () => {
    const session = (method: string, body?: unknown) =>
      conformance.fetch(
        new Request(`${baseUrl}/api/session`, {
          method,
          headers: { "content-type": "application/json", "x-kiln-csrf": "1" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
    const signedIn = await session("POST", { email, password: PASSWORD });
    expect(signedIn.status).toBe(201);
    expect(Object.keys((await signedIn.json()) as object)).toEqual(["expiresAt"]);
    const cookie = signedIn.headers.get("set-cookie")?.split(";")[0] ?? "";
    expect(cookie).toMatch(/^kiln_session=./);
    // What a browser does on the gateway's own origin: the cookie sent, the CSRF header added by the SDK.
    const browser = new Kiln({ baseUrl, cookieSession: true, headers: { cookie }, fetch: conformance.fetch });
    const verified = await browser.setup.verify({ organizationId });
    expect(verified).toMatchObject({ ok: true, principal: { type: "user" }, organization: { id: organizationId } });
    const signedOut = await session("DELETE");
    expect(signedOut.status).toBe(200);
    expect(signedOut.headers.get("set-cookie")).toMatch(/^kiln_session=;/);
  });
});

describe("SAML sign-in (non-public)", () => {
  let idp: SamlTestIdp;
  beforeAll(async () => {
    idp = await startSamlTestIdp();
  });
  afterAll(() => idp?.close());

  it("sets, reads and deletes the settings; serves the metadata; signs in SP-initiated", async () => {
    // An owner and organization of their own: the sign-in adds a member, which other tests here count.
    const owner = await raw<{ accessToken: string }>("POST", "/api/auth/signup", {
      email: `sdk-saml-owner-${randomUUID()}@example.test`,
      password: PASSWORD,
      fullName: "SAML Owner",
    });
    const token = owner.body.accessToken;
    const onboarded = await raw<{ organization: { id: string } }>(
      "POST",
      "/api/onboarding/complete",
      { fullName: "SAML Owner", organizationName: "SAML" },
      token,
    );
    const org = onboarded.body.organization.id;
    const path = `/api/organizations/${org}/saml`;
    const settings = {
      enabled: true,
      idpEntityId: idp.entityId,
      idpSsoUrl: idp.ssoUrl,
      idpCertificate: idp.keys.certificate,
    };
    expect((await raw("PUT", path, settings, token)).status).toBe(200);
    const read = await raw<{ serviceProvider: { entityId: string; acsUrl: string } }>("GET", path, undefined, token);
    const sp = read.body.serviceProvider;
    const metadata = await fetch(`${baseUrl}/saml/${org}/metadata`);
    const xml = await metadata.text();
    expect(conformance.check("GET", metadata.url, metadata, xml, "application/samlmetadata+xml")).toEqual([]);
    const manual = (url: string, init: RequestInit = {}) =>
      conformance.fetch(new Request(url, { ...init, redirect: "manual" }));
    const login = await manual(`${baseUrl}/saml/${org}/login?returnTo=/prompts`);
    expect(login.status).toBe(302);
    const location = login.headers.get("location") ?? "";
    const inResponseTo = await idp.requestIdOf(location, sp);
    const SAMLResponse = await idp.response({ sp, email: `sdk-saml-${randomUUID()}@acme.example`, inResponseTo });
    const RelayState = new URL(location).searchParams.get("RelayState") ?? "";
    const acs = await manual(sp.acsUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ SAMLResponse, RelayState }),
    });
    expect(acs.status).toBe(303);
    expect((await raw("DELETE", path, undefined, token)).status).toBe(200);
  });
});

describe("webhooks", () => {
  it("creates, reads, lists, updates, tests, redelivers, rotates and deletes a webhook", async () => {
    const created = await user.webhooks.create({
      organizationId,
      url: "http://127.0.0.1:9/hooks",
      events: ["run.completed", "label.moved"],
    });
    expect(created.secret).toMatch(/^whsec_/);
    expect((await user.webhooks.get(created.id)).status).toBe("enabled");
    expect((await user.webhooks.list({ organizationId })).data.map((w) => w.id)).toContain(created.id);
    const updated = await user.webhooks.update(created.id, { events: ["run.completed"] });
    expect(updated.events).toEqual(["run.completed"]);
    const test = await user.webhooks.test(created.id);
    expect(test).toMatchObject({ event: "webhook.test", status: "failed", responseCode: null });
    expect(test.attempts[0]?.error).toContain("ECONNREFUSED");
    const deliveries = await user.webhooks.deliveries(created.id);
    expect(deliveries.data.map((d) => d.id)).toEqual([test.id]);
    const redelivered = await user.webhooks.redeliver(created.id, test.id);
    expect(redelivered.status).toBe("pending");
    const rotated = await user.webhooks.rotateSecret(created.id);
    expect(rotated.secret).not.toBe(created.secret);
    expect((await user.webhooks.delete(created.id)).id).toBe(created.id);
    const gone = await failureOf(user.webhooks.get(created.id));
    expect(gone).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("provider connections", () => {
  it("creates, reads, lists, updates, tests and deletes a connection; its models are the organization's", async () => {
    const created = await user.providerConnections.create({
      organizationId,
      name: "sdkconn",
      provider: "openai_compatible",
      apiKey: "sk-sdk-connection-key-1234",
      baseUrl: stub.baseUrl,
      models: [{ model: "slow", inputPerMTokUsd: 0, outputPerMTokUsd: 0 }],
    });
    expect(created).toMatchObject({ name: "sdkconn", apiKeyHint: "…1234" });
    expect(JSON.stringify(created)).not.toContain("sk-sdk-connection-key-1234");
    expect((await user.providerConnections.get(created.id)).id).toBe(created.id);
    expect((await user.providerConnections.list({ organizationId })).data.map((c) => c.id)).toContain(created.id);
    const models = await user.models.list({ organizationId });
    expect(models.data.find((m) => m.id === "sdkconn/slow")).toMatchObject({ connectionId: created.id });
    const updated = await user.providerConnections.update(created.id, { apiKey: "sk-sdk-connection-key-5678" });
    expect(updated.apiKeyHint).toBe("…5678");
    // The stub lists no models: the test answers the provider's 404 as ok: false.
    const tested = await user.providerConnections.test(created.id);
    expect(tested).toMatchObject({ ok: false, error: { code: "provider_error" } });
    expect((await user.providerConnections.delete(created.id)).id).toBe(created.id);
    expect(await failureOf(user.providerConnections.get(created.id))).toMatchObject({ status: 404 });
  });
});

describe("online evaluation", () => {
  it("creates, reads, lists, updates and deletes a rule; lists and summarises its scores", async () => {
    const prompt = await user.prompts.create({ organizationId, name: "Sampled", defaultModel: "local/echo" });
    const version = await user.prompts.createVersion(prompt.id, { systemPrompt: "Hello." });
    await user.prompts.publish(prompt.id, { versionId: version.id });
    const rule = await user.onlineRules.create({
      organizationId,
      name: "Says hello",
      target: { kind: "prompt", id: prompt.id, label: "production" },
      sampleRate: 1,
      assertions: [{ type: "contains", value: "Hello" }],
    });
    expect(rule).toMatchObject({ enabled: true, sampleRate: 1, target: { kind: "prompt", id: prompt.id } });
    expect((await user.onlineRules.get(rule.id)).name).toBe("Says hello");
    expect((await user.onlineRules.list({ organizationId })).data.map((r) => r.id)).toContain(rule.id);
    const run = await keyed.prompts.run(prompt.id, { organizationId, variables: {}, label: "production" });
    let scores = await user.scores.list({ organizationId, ruleId: rule.id });
    for (let i = 0; i < 100 && scores.data.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      scores = await user.scores.list({ organizationId, ruleId: rule.id });
    }
    expect(scores.data.map((s) => [s.target.runId, s.passed, s.label])).toEqual([[run.id, true, "production"]]);
    const summary = await user.scores.summary({ organizationId, ruleId: rule.id, bucket: "hour" });
    expect(summary.buckets.map((b) => [b.versionId, b.count, b.passRate])).toEqual([[version.id, 1, 1]]);
    const paused = await user.onlineRules.update(rule.id, { enabled: false });
    expect(paused.enabled).toBe(false);
    expect((await user.onlineRules.delete(rule.id)).id).toBe(rule.id);
    expect(await failureOf(user.onlineRules.get(rule.id))).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("bundles", () => {
  it("exports the organization and imports the bundle (a dry run, then for real: nothing new)", async () => {
    const bundle = await user.bundles.export(organizationId);
    expect(bundle.format).toBe("kiln.bundle/v1");
    expect(bundle.prompts.length).toBeGreaterThan(0);
    const dry = await user.bundles.import(organizationId, bundle, { dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, summary: { created: 0, conflicts: 0 } });
    const real = await user.bundles.import(organizationId, bundle);
    expect(real.summary.created).toBe(0);
    expect(real.summary.skipped).toBe(real.items.length);
    const promptfoo = await user.bundles.import(
      organizationId,
      { format: "promptfoo", config: "prompts: ['Say {{word}}']\ntests:\n  - vars: {word: hi}\n" },
      { dryRun: true },
    );
    expect(promptfoo.summary.created).toBe(3);
  });
});

describe("the runs list (non-public)", () => {
  it("lists the organization's runs filtered by kind, status, model and time, and reads any run", async () => {
    const all = await raw<{ data: { id: string; kind: string; status: string }[]; nextCursor: string | null }>(
      "GET",
      `/api/runs?organizationId=${organizationId}&limit=200`,
      undefined,
      accessToken,
    );
    expect(all.status).toBe(200);
    expect(new Set(all.body.data.map((r) => r.kind))).toEqual(new Set(["prompt", "skill", "agent", "judge"]));
    const agents = await raw<{ data: { kind: string }[] }>(
      "GET",
      `/api/runs?organizationId=${organizationId}&kind=agent&status=succeeded&model=local/echo`,
      undefined,
      accessToken,
    );
    expect(agents.body.data.length).toBeGreaterThan(0);
    expect(agents.body.data.every((r) => r.kind === "agent")).toBe(true);
    const future = await raw<{ data: unknown[] }>(
      "GET",
      `/api/runs?organizationId=${organizationId}&createdAfter=2999-01-01T00:00:00Z`,
      undefined,
      accessToken,
    );
    expect(future.body.data).toEqual([]);
    const bad = await raw(
      "GET",
      `/api/runs?organizationId=${organizationId}&createdAfter=yesterday`,
      undefined,
      accessToken,
    );
    expect(bad.status).toBe(400);
    const first = all.body.data[0];
    const one = await raw<{ id: string; kind: string }>("GET", `/api/runs/${first?.id}`, undefined, accessToken);
    expect(one.body).toMatchObject({ id: first?.id, kind: first?.kind });
  });
});

describe("the organization routes (non-public)", () => {
  it("reads and changes the organization, adds and lists members", async () => {
    const read = await raw<{ organization: { settings: { protectedLabels: string[] } } }>(
      "GET",
      `/api/organizations/${organizationId}`,
      undefined,
      accessToken,
    );
    expect(read.status).toBe(200);
    expect(read.body.organization.settings.protectedLabels).toEqual(["production"]);
    const changed = await raw<{ name: string }>(
      "PATCH",
      `/api/organizations/${organizationId}`,
      { name: "Engines Ltd" },
      accessToken,
    );
    expect(changed.body.name).toBe("Engines Ltd");
    const other = await raw<{ user: { email: string } }>("POST", "/api/auth/signup", {
      email: "grace@example.test",
      password: PASSWORD,
    });
    const added = await raw<{ membership: { role: string } }>(
      "POST",
      `/api/organizations/${organizationId}/members`,
      { email: other.body.user.email, role: "admin" },
      accessToken,
    );
    expect(added.status).toBe(201);
    const members = await raw<{ data: unknown[] }>(
      "GET",
      `/api/organizations/${organizationId}/members`,
      undefined,
      accessToken,
    );
    expect(members.body.data).toHaveLength(2);
  });

  it("answers the signed-in user, lists their organizations and creates another", async () => {
    const created = await raw<{ organization: { id: string }; membership: { role: string } }>(
      "POST",
      "/api/organizations",
      { name: "Second shop" },
      accessToken,
    );
    expect(created.status).toBe(201);
    expect(created.body.membership.role).toBe("owner");
    const mine = await raw<{ data: { organization: { id: string } }[] }>(
      "GET",
      "/api/organizations",
      undefined,
      accessToken,
    );
    expect(mine.body.data.map((m) => m.organization.id)).toEqual([created.body.organization.id, organizationId]);
    const me = await raw<{ id: string; email: string }>("GET", "/api/me", undefined, accessToken);
    expect(me.body.email).toBe(email);
  });

  it("changes a role, removes a member, invites, lists, revokes and accepts invitations", async () => {
    const members = `/api/organizations/${organizationId}/members`;
    const grace = await raw<{ data: { user: { id: string; email: string } }[] }>(
      "GET",
      members,
      undefined,
      accessToken,
    );
    const graceId = grace.body.data.find((m) => m.user.email === "grace@example.test")?.user.id;
    const changed = await raw<{ membership: { role: string } }>(
      "PATCH",
      `${members}/${graceId}`,
      { role: "member" },
      accessToken,
    );
    expect(changed.body.membership.role).toBe("member");
    const invitations = `/api/organizations/${organizationId}/invitations`;
    const invited = await raw<{ invitation: { id: string }; token: string; acceptUrl: string }>(
      "POST",
      invitations,
      { email: "hopper@example.test", role: "admin" },
      accessToken,
    );
    expect(invited.status).toBe(201);
    expect(invited.body.acceptUrl).toBe(`${baseUrl}/invite#${invited.body.token}`);
    const spare = await raw<{ invitation: { id: string } }>(
      "POST",
      invitations,
      { email: "spare@example.test", role: "member" },
      accessToken,
    );
    const pending = await raw<{ data: { id: string }[] }>("GET", invitations, undefined, accessToken);
    expect(pending.body.data.map((i) => i.id)).toEqual([spare.body.invitation.id, invited.body.invitation.id]);
    expect(JSON.stringify(pending.body)).not.toContain(invited.body.token);
    const revoked = await raw<{ status: string }>(
      "DELETE",
      `${invitations}/${spare.body.invitation.id}`,
      undefined,
      accessToken,
    );
    expect(revoked.body.status).toBe("revoked");
    // Hopper signs up with the invitation and is an admin at once; another invitation, accepted signed in.
    const hopper = await raw<{ accessToken: string; membership: { role: string } }>("POST", "/api/auth/signup", {
      email: "hopper@example.test",
      password: PASSWORD,
      invitationToken: invited.body.token,
    });
    expect(hopper.body.membership).toMatchObject({ organizationId, role: "admin" });
    const removed = await raw<{ user: { id: string } }>("DELETE", `${members}/${graceId}`, undefined, accessToken);
    expect(removed.body.user.id).toBe(graceId);
    const again = await raw<{ token: string }>(
      "POST",
      invitations,
      { email: "grace@example.test", role: "member" },
      hopper.body.accessToken,
    );
    const graceToken = await raw<{ accessToken: string }>("POST", "/api/auth/token", {
      email: "grace@example.test",
      password: PASSWORD,
    });
    const accepted = await raw<{ organization: { id: string }; membership: { role: string } }>(
      "POST",
      "/api/invitations/accept",
      { token: again.body.token },
      graceToken.body.accessToken,
    );
    expect(accepted.body).toMatchObject({ organization: { id: organizationId }, membership: { role: "member" } });
  });

  it('lists the roles, creates, changes and deletes a custom role (docs/security.md "Roles")', async () => {
    const roles = `/api/organizations/${organizationId}/roles`;
    const made = await raw<{ name: string }>(
      "POST",
      roles,
      { name: "sdk-reader", scopes: ["prompts:read"] },
      accessToken,
    );
    expect(made.status).toBe(201);
    const listed = await raw<{ data: { name: string }[] }>("GET", roles, undefined, accessToken);
    expect(listed.body.data.map((r) => r.name)).toContain("sdk-reader");
    const changed = await raw<{ scopes: string[] }>(
      "PATCH",
      `${roles}/sdk-reader`,
      { scopes: ["runs:read"] },
      accessToken,
    );
    expect(changed.body.scopes).toEqual(["runs:read"]);
    expect((await raw("DELETE", `${roles}/sdk-reader`, undefined, accessToken)).status).toBe(200);
  });
});

describe("traces and sessions through the SDK", () => {
  it("lists an ingested trace, reads its span tree, and its session", async () => {
    const key = await raw<{ key: string }>(
      "POST",
      "/api/api-keys",
      { organizationId, name: "traces", scopes: ["traces:read", "traces:write"] },
      accessToken,
    );
    expect(key.status).toBe(201);
    const traceId = randomUUID().replaceAll("-", "");
    const session = `sdk-${traceId}`;
    const attributes = [
      { key: "session.id", value: { stringValue: session } },
      { key: "user.id", value: { stringValue: "ada" } },
    ];
    const otlp = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId,
                  spanId: "a1b2c3d4e5f60718",
                  name: "chat",
                  startTimeUnixNano: "1000000",
                  endTimeUnixNano: "2000000",
                  attributes,
                },
              ],
            },
          ],
        },
      ],
    };
    // The OTLP endpoint is not in the OpenAPI document (docs/observability.md): plain fetch.
    const ingested = await fetch(`${baseUrl}/otel/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key.body.key}` },
      body: JSON.stringify(otlp),
    });
    expect(ingested.status).toBe(200);
    const reader = client({ apiKey: key.body.key });
    const all: string[] = [];
    for await (const t of reader.traces.list({ user: "ada", limit: 1 })) all.push(t.traceId);
    expect(all).toEqual([traceId]);
    const one = await reader.traces.get(traceId);
    expect(one.spans.map((span) => span.name)).toEqual(["chat"]);
    const sessions = await reader.sessions.list({ user: "ada" });
    expect(sessions.data.map((s) => s.sessionId)).toEqual([session]);
    const detail = await reader.sessions.get(session);
    expect(detail).toMatchObject({ sessionId: session, traceCount: 1, userId: "ada" });
    const turns: string[] = [];
    for await (const t of reader.sessions.traces(session, { limit: 1 })) turns.push(t.traceId);
    expect(turns).toEqual([traceId]);
    const bad = await reader.traces.list({ minCost: "-1" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(bad).toBeInstanceOf(KilnError);
    expect((bad as KilnError).status).toBe(400);
  });
});

describe("annotation queues", () => {
  it("creates, reads, lists, updates a queue; adds, claims, reviews, skips, releases items; makes a case; deletes it", async () => {
    const prompt = await user.prompts.create({ organizationId, name: "Review me", defaultModel: "local/echo" });
    const v = await user.prompts.createVersion(prompt.id, {
      systemPrompt: "Hello {{who}}.",
      variablesSchema: { type: "object", properties: { who: { type: "string" } }, required: ["who"] },
    });
    await user.prompts.publish(prompt.id, { versionId: v.id });
    const runs = await Promise.all(
      ["a", "b", "c"].map((who) => keyed.prompts.run(prompt.id, { organizationId, variables: { who } })),
    );
    const skill = await user.skills.create({ organizationId, name: "Reviewed" });
    const queue = await keyed.annotationQueues.create({
      organizationId,
      name: "Greetings",
      scoreConfigs: [{ name: "good", kind: "boolean", required: true }],
    });
    expect(queue.progress).toMatchObject({ pending: 0 });
    expect((await user.annotationQueues.list({ organizationId })).data.map((q) => q.id)).toContain(queue.id);
    const renamed = await user.annotationQueues.update(queue.id, { name: "Greetings 2" });
    expect(renamed.name).toBe("Greetings 2");
    const added = await keyed.annotationQueues.addItems(queue.id, { runIds: runs.map((r) => r.id) });
    expect(added).toMatchObject({ skipped: 0 });
    expect(added.data).toHaveLength(3);
    expect((await keyed.annotationQueues.items(queue.id, { status: "pending" })).data).toHaveLength(3);
    const first = await user.annotationQueues.next(queue.id);
    const firstId = first.item?.id ?? "";
    expect(first.content?.run).toMatchObject({ kind: "prompt", status: "succeeded" });
    const reviewed = await user.annotationQueues.review(queue.id, firstId, { scores: { good: true }, comment: "ok" });
    expect(reviewed).toMatchObject({ status: "completed", review: { scores: { good: true }, comment: "ok" } });
    const made = await user.annotationQueues.toCase(queue.id, firstId, {
      skillId: skill.id,
      expectedOutput: { text: "Hello!" },
    });
    expect(made.item.evaluationCase?.id).toBe(made.evaluationCaseId);
    expect((await user.annotationQueues.item(queue.id, firstId)).item.evaluationCase?.skillId).toBe(skill.id);
    const second = (await user.annotationQueues.next(queue.id)).item?.id ?? "";
    expect((await user.annotationQueues.skip(queue.id, second)).status).toBe("skipped");
    const third = (await user.annotationQueues.next(queue.id)).item?.id ?? "";
    expect((await user.annotationQueues.release(queue.id, third)).status).toBe("pending");
    const refused = await failureOf(user.annotationQueues.review(queue.id, third, { scores: { good: true } }));
    expect(refused).toMatchObject({ status: 409 });
    const progress = (await user.annotationQueues.get(queue.id)).progress;
    expect(progress).toMatchObject({ pending: 1, inReview: 0, completed: 1, skipped: 1 });
    expect((await user.annotationQueues.delete(queue.id)).id).toBe(queue.id);
    expect(await failureOf(user.annotationQueues.get(queue.id))).toMatchObject({ status: 404, code: "not_found" });
  });

  it("reads and changes the organization's trace retention", async () => {
    const path = `/api/traces/settings?organizationId=${organizationId}`;
    const before = await raw<{ retentionDays: number }>("GET", path, undefined, accessToken);
    expect(before).toMatchObject({ status: 200, body: { retentionDays: 30 } });
    const changed = await raw<{ retentionDays: number }>("PUT", path, { retentionDays: 7 }, accessToken);
    expect(changed).toMatchObject({ status: 200, body: { organizationId, retentionDays: 7 } });
  });
});

describe("datasets", () => {
  it("creates, lists, reads, renames a dataset; adds, imports, copies, reads by version and removes items; deletes it", async () => {
    const dataset = await keyed.datasets.create({ name: "Greetings", description: "sdk" });
    expect(dataset).toMatchObject({ organizationId, version: 0, itemCount: 0 });
    expect((await user.datasets.list({ organizationId })).data.map((d) => d.id)).toContain(dataset.id);
    expect((await user.datasets.update(dataset.id, { name: "Greetings 2" })).name).toBe("Greetings 2");
    const added = await keyed.datasets.addItems(dataset.id, {
      items: [{ input: { who: "Ada" }, expectedOutput: "Hello Ada.", metadata: { tier: "gold" } }, { input: {} }],
    });
    expect(added.dataset).toMatchObject({ version: 1, itemCount: 2 });
    const imported = await keyed.datasets.import(dataset.id, {
      format: "csv",
      content: "who,expected_output\nGrace,Hi\n",
    });
    expect(imported).toMatchObject({ imported: 1, dataset: { version: 2 } });
    const skill = await user.skills.create({ organizationId, name: "Dataset source" });
    const cases = await keyed.evaluations.createCases(skill.id, { cases: [{ input: { who: "Alan" } }] });
    const copied = await keyed.datasets.addFrom(dataset.id, { evaluationCaseIds: [cases.data[0]?.id ?? ""] });
    expect(copied.data[0]).toMatchObject({ input: { who: "Alan" }, source: { kind: "evaluation_case" } });
    const second = added.data[1]?.id ?? "";
    expect((await keyed.datasets.removeItem(dataset.id, second)).removedInVersion).toBe(4);
    expect((await keyed.datasets.get(dataset.id)).itemCount).toBe(3);
    expect((await keyed.datasets.items(dataset.id, { version: "1" })).data.map((i) => i.id)).toEqual(
      added.data.map((i) => i.id),
    );
    expect((await keyed.datasets.delete(dataset.id)).id).toBe(dataset.id);
    expect(await failureOf(keyed.datasets.get(dataset.id))).toMatchObject({ status: 404, code: "not_found" });
  });

  it("runs a prompt evaluation on a dataset, reads, lists, compares and cancels it (kiln.promptEvaluations)", async () => {
    const prompt = await user.prompts.create({ organizationId, name: "Evaluated", defaultModel: "local/echo" });
    const variablesSchema = { type: "object", properties: { who: { type: "string" } } };
    const v1 = await user.prompts.createVersion(prompt.id, { systemPrompt: "Hello {{who}}.", variablesSchema });
    await user.prompts.publish(prompt.id, { versionId: v1.id });
    const dataset = await keyed.datasets.create({ name: "Who" });
    await keyed.datasets.addItems(dataset.id, { items: [{ input: { who: "Ada" } }, { input: { who: "Grace" } }] });
    const body = { datasetId: dataset.id, assertions: [{ type: "contains" as const, value: "Hello" }] };
    const started = await keyed.promptEvaluations.run(prompt.id, body);
    expect(started).toMatchObject({ status: "queued", evaluationRunId: started.id });
    const done = await keyed.promptEvaluations.waitForResult(prompt.id, started.id, { timeoutMs: 30_000 });
    expect(done.summary?.byTarget.v1?.passRate).toBe(1);
    expect(done.results.map((r) => r.byTarget.v1?.outcome)).toEqual(["pass", "pass"]);
    const again = await keyed.promptEvaluations.run(prompt.id, body);
    await keyed.promptEvaluations.waitForResult(prompt.id, again.id, { timeoutMs: 30_000 });
    const listed = await keyed.promptEvaluations.list(prompt.id, { limit: 1 }).pages().next();
    expect(listed.value?.data.map((r: { id: string }) => r.id)).toEqual([again.id]);
    const compared = await keyed.promptEvaluations.compare(prompt.id, { base: started.id, head: again.id });
    expect(compared.summary.changes.unchanged).toBe(2);
    const items = Array.from({ length: 50 }, (_, i) => ({ input: { who: `n${i}` } }));
    await keyed.datasets.addItems(dataset.id, { items });
    const big = await keyed.promptEvaluations.run(prompt.id, { ...body, repeats: 20 });
    expect((await keyed.promptEvaluations.cancel(prompt.id, big.id)).status).toBe("cancelled");
  });
});

describe("model routes", () => {
  it('creates, lists, reads, changes and deletes a route (docs/providers.md "Routes"), and a run goes through it', async () => {
    const created = await raw<{ id: string; name: string }>(
      "POST",
      "/api/model-routes",
      { organizationId, name: "sdk-route", strategy: "fallback", targets: [{ model: "local/echo" }] },
      accessToken,
    );
    expect(created).toMatchObject({ status: 201, body: { name: "sdk-route" } });
    const path = `/api/model-routes/${created.body.id}`;
    const listed = await raw<{ data: { id: string }[] }>(
      "GET",
      `/api/model-routes?organizationId=${organizationId}`,
      undefined,
      accessToken,
    );
    expect(listed.body.data.map((r) => r.id)).toContain(created.body.id);
    expect((await raw("GET", path, undefined, accessToken)).status).toBe(200);
    const changed = await raw<{ attemptTimeoutMs: number }>("PATCH", path, { attemptTimeoutMs: 5000 }, accessToken);
    expect(changed).toMatchObject({ status: 200, body: { attemptTimeoutMs: 5000 } });
    const prompt = await user.prompts.create({ organizationId, name: "Routed", defaultModel: "route/sdk-route" });
    const v = await user.prompts.createVersion(prompt.id, { systemPrompt: "Hi." });
    await user.prompts.publish(prompt.id, { versionId: v.id });
    const run = await user.prompts.run(prompt.id, { organizationId, variables: {} });
    expect(run).toMatchObject({ status: "succeeded", route: "sdk-route", model: "local/echo" });
    expect((await raw("DELETE", path, undefined, accessToken)).status).toBe(200);
  });
});

describe("budgets", () => {
  it("creates, lists, reads, changes and deletes a budget through kiln.budgets (docs/budgets.md)", async () => {
    const created = await user.budgets.create({
      organizationId,
      name: "sdk budget",
      scope: { type: "organization" },
      limitUsd: 50,
      period: "month",
      action: "alert",
    });
    expect(created).toMatchObject({ name: "sdk budget", alertAt: [0.5, 0.8, 1], scope: { type: "organization" } });
    expect(created.id).toMatch(/^bdg_/);
    expect(typeof created.spentUsd).toBe("number");
    expect((await user.budgets.list({ organizationId })).data.map((b) => b.id)).toContain(created.id);
    expect((await keyed.budgets.get(created.id)).id).toBe(created.id);
    expect((await user.budgets.update(created.id, { limitUsd: 75, action: "block" })).limitUsd).toBe(75);
    expect(await failureOf(user.budgets.update(created.id, { period: "week" as "day" }))).toMatchObject({
      status: 400,
      code: "invalid_argument",
    });
    expect((await user.budgets.delete(created.id)).id).toBe(created.id);
    expect(await failureOf(user.budgets.get(created.id))).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("usage and SCIM tokens", () => {
  it("reads the usage of the runs above (docs/usage.md), as JSON and CSV", async () => {
    const day = new Date().toISOString().slice(0, 10);
    const usage = await raw<{ data: { runs: number }[]; totals: { runs: number } }>(
      "GET",
      `/api/usage?organizationId=${organizationId}&from=${day}&to=${day}&groupBy=model`,
      undefined,
      accessToken,
    );
    expect(usage.status).toBe(200);
    expect(usage.body.totals.runs).toBe(usage.body.data.reduce((sum, row) => sum + row.runs, 0));
  });

  it("creates a SCIM token shown once, lists it without its secret and revokes it (docs/scim.md)", async () => {
    const path = `/api/organizations/${organizationId}/scim-tokens`;
    const created = await raw<{ scimToken: { id: string }; token: string }>(
      "POST",
      path,
      { name: "sdk-idp" },
      accessToken,
    );
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^scim_/);
    const id = created.body.scimToken.id;
    const listed = await raw<{ data: { id: string }[] }>("GET", path, undefined, accessToken);
    expect(listed.body.data.map((t) => t.id)).toContain(id);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
    expect((await raw("DELETE", `${path}/${id}`, undefined, accessToken)).status).toBe(200);
  });
});

describe("the audit log", () => {
  it("lists the changes above newest first and verifies the chain (docs/governance.md)", async () => {
    const page = await user.auditLog.list({ organizationId, action: "prompt.created", limit: 2 });
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data[0]).toMatchObject({ action: "prompt.created", actor: { type: "user" }, outcome: "success" });
    const verified = await user.auditLog.verify({ organizationId });
    expect(verified).toMatchObject({ organizationId, valid: true, problem: null });
    expect(verified.entries).toBeGreaterThan(1);
  });
});

describe("the audit log's webhook", () => {
  it("sets, reads, rotates and removes the organization's stream, the secret answered when made (docs/governance.md)", async () => {
    const path = `/api/organizations/${organizationId}/audit-stream`;
    // Nothing listens on port 9: only the setting is exercised here (test/audit-webhook.test.ts streams).
    const set = await raw<{ url: string; secret?: string }>(
      "PUT",
      path,
      { url: "http://127.0.0.1:9/audit" },
      accessToken,
    );
    expect(set).toMatchObject({ status: 200, body: { url: "http://127.0.0.1:9/audit" } });
    expect(set.body.secret).toMatch(/^whsec_/);
    const moved = await raw<{ secret?: string }>("PUT", path, { url: "http://127.0.0.1:9/moved" }, accessToken);
    expect(moved.status).toBe(200);
    expect(moved.body.secret).toBeUndefined();
    const read = await raw<{ url: string; delivery: { acknowledgedSequence: number } }>(
      "GET",
      path,
      undefined,
      accessToken,
    );
    expect(read).toMatchObject({ status: 200, body: { url: "http://127.0.0.1:9/moved" } });
    const rotated = await raw<{ secret: string }>("POST", `${path}/rotate-secret`, undefined, accessToken);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(set.body.secret);
    expect((await raw("DELETE", path, undefined, accessToken)).status).toBe(200);
    expect((await raw("GET", path, undefined, accessToken)).status).toBe(404);
  });
});

describe("the OpenAPI document against the live answers", () => {
  it("matched every answer above to its documented operation, status and schema", () => {
    expect(conformance.violations).toEqual([]);
    expect(conformance.seen.size).toBeGreaterThan(60);
  });

  it("saw every documented operation answer with a success status", () => {
    expect(conformance.unexercised()).toEqual([]);
  });
});
