import { randomUUID } from "node:crypto";
import { createLogger } from "@kiln/kit/logger";
import { buildTestPlatform } from "@kiln/testing/platform";
import {
  createTestClient,
  type ErrorBody,
  type EvaluationCase,
  type EvaluationRun,
  type EvaluationStarted,
  type List,
  type Skill,
  type TestClient,
  type TestResponse,
} from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The evaluation REST routes (api.md "Evaluations") through the embedded platform: each route's
 * happy path, refused input (which changes nothing), scopes, other organizations, unknown
 * targets, and the OpenAPI document.
 */

type Embedded = Awaited<ReturnType<typeof buildTestPlatform>>;

let kiln: Embedded;
let api: TestClient;

const CATALOG_SCOPES = ["prompts:read", "prompts:write", "tools:read", "tools:write", "skills:read", "skills:write"];
const EVALUATION_SCOPES = ["evaluations:read", "evaluations:write"];

interface Member {
  token: string;
  organizationId: string;
}

/** The owner of organization A and its keys; the owner of organization B and a key of B. */
let owner: Member;
let ownerKey: string;
let readOnlyKey: string;
let writeOnlyKey: string;
let noEvaluationKey: string;
let stranger: Member;
let strangerKey: string;

/** A skill with a published version ("Hello {{name}}") and a draft ("Goodbye {{name}}"). */
let skill: Skill;
/** A skill with a draft only, and one with a published version only. */
let draftOnly: Skill;
let publishedOnly: Skill;
/** A skill of organization B. */
let strangerSkill: Skill;

const NAME_SCHEMA = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

beforeAll(async () => {
  kiln = await buildTestPlatform({ logger: createLogger({ name: "test", level: "silent" }) });
  api = createTestClient(kiln.gateway.app);
  owner = await newMember();
  ownerKey = (await api.createApiKey(owner.token, owner.organizationId, [...CATALOG_SCOPES, ...EVALUATION_SCOPES])).key;
  readOnlyKey = (await api.createApiKey(owner.token, owner.organizationId, ["evaluations:read"])).key;
  writeOnlyKey = (await api.createApiKey(owner.token, owner.organizationId, ["evaluations:write"])).key;
  noEvaluationKey = (await api.createApiKey(owner.token, owner.organizationId, [...CATALOG_SCOPES, "runs:write"])).key;
  stranger = await newMember();
  strangerKey = (await api.createApiKey(stranger.token, stranger.organizationId, EVALUATION_SCOPES)).key;

  const hello = await api.createPublishedPrompt(owner.token, owner.organizationId, {
    systemPrompt: "Hello {{name}}",
    variablesSchema: NAME_SCHEMA,
  });
  const goodbye = await api.createPublishedPrompt(owner.token, owner.organizationId, {
    systemPrompt: "Goodbye {{name}}",
    variablesSchema: NAME_SCHEMA,
  });
  skill = await composedSkill(owner, hello.prompt.id);
  await api.publishSkill(owner.token, skill.id);
  const draft = await api.post<{ id: string }>(`/api/skills/${skill.id}/versions`, {}, { token: owner.token });
  expect(draft.status, draft.text).toBe(201);
  await api.replaceSkillPrompts(owner.token, draft.body.id, [{ promptId: goodbye.prompt.id }]);
  skill = await read<Skill>(`/api/skills/${skill.id}`);
  expect(skill.draftVersionId).toBe(draft.body.id);

  draftOnly = await composedSkill(owner, hello.prompt.id);
  publishedOnly = await composedSkill(owner, hello.prompt.id);
  await api.publishSkill(owner.token, publishedOnly.id);
  publishedOnly = await read<Skill>(`/api/skills/${publishedOnly.id}`);
  expect(publishedOnly.draftVersionId).toBeNull();

  const foreign = await api.createPublishedPrompt(stranger.token, stranger.organizationId, {
    systemPrompt: "Hej {{name}}",
    variablesSchema: NAME_SCHEMA,
  });
  strangerSkill = await composedSkill(stranger, foreign.prompt.id);
  await api.publishSkill(stranger.token, strangerSkill.id);
  await api.createEvaluationCases(stranger.token, stranger.organizationId, strangerSkill.id, [
    { input: { name: "Ada" } },
  ]);
});

afterAll(async () => {
  await kiln?.close();
});

async function newMember(): Promise<Member> {
  const user = await api.signUp();
  const onboarding = await api.onboard(user.accessToken);
  return { token: user.accessToken, organizationId: onboarding.organization.id };
}

/** A skill whose draft composes `promptId` (published by the caller when needed). */
async function composedSkill(member: Member, promptId: string): Promise<Skill> {
  const created = await api.createSkill(member.token, member.organizationId, { name: `Greeter ${randomUUID()}` });
  return api.replaceSkillPrompts(member.token, created.draftVersionId ?? "", [{ promptId }]);
}

const id = (prefix: string) => expect.stringMatching(new RegExp(`^${prefix}_[0-9A-Za-z]+$`));
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
const unknownId = (prefix: string) => `${prefix}_${"0".repeat(32)}`;

/** The error envelope of api.md with this status and code (and a detail on `field`). */
function expectError(res: TestResponse, status: number, code: string, field?: string): ErrorBody["error"] {
  expect(res.status, res.text).toBe(status);
  const requestId = res.headers["x-request-id"];
  expect(requestId).toBeTruthy();
  expect(res.body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Array), requestId } });
  const { error } = res.body as ErrorBody;
  for (const d of error.details) expect(d).toEqual({ field: expect.any(String), issue: expect.any(String) });
  if (field !== undefined) expect(error.details.map((d) => d.field)).toContain(field);
  expect(res.headers["x-api-stability"]).toBe("beta");
  return error;
}

/** The body of a successful answer with this status; every evaluation route is public beta. */
function ok<T>(res: TestResponse<T>, status = 200): T {
  expect(res.status, res.text).toBe(status);
  expect(res.headers["x-api-stability"]).toBe("beta");
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  return res.body;
}

async function read<T>(path: string, query?: Record<string, string>, credential = owner.token): Promise<T> {
  return ok(await api.get<T>(path, { token: credential, query }));
}

const CODE_OF_STATUS: Record<number, string> = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "permission_denied",
  404: "not_found",
  409: "failed_precondition",
};

/** A refused request: [what it is, the request, "<status> [<field>]"], e.g. "400 cases[0].input" or "404". */
type Refusal = [string, () => Promise<TestResponse>, string];

async function expectRefusals(refusals: Refusal[]): Promise<void> {
  for (const [what, send, expected] of refusals) {
    const [status, field] = expected.split(" ");
    const res = await send();
    expect(res.status, `${what}: ${res.text}`).toBe(Number(status));
    expectError(res, Number(status), CODE_OF_STATUS[Number(status)] ?? "", field);
  }
}

const casesPath = (skillId: string) => `/api/skills/${skillId}/evaluation-cases`;
const runPath = (skillId: string) => `/api/skills/${skillId}/evaluations/run`;
const evaluationPath = (skillId: string, runId: string) => `/api/skills/${skillId}/evaluations/${runId}`;

/** Every case of a skill, as its owner reads them. */
const casesOf = (skillId: string) => read<List<EvaluationCase>>(casesPath(skillId), { limit: "200" });

/** Everything the evaluation routes can change for `skillId`: its cases, and its runs as listed in `runIds`. */
async function snapshot(skillId: string, runIds: string[] = []): Promise<unknown> {
  return {
    cases: await casesOf(skillId),
    runs: await Promise.all(runIds.map((r) => api.getEvaluation(owner.token, skillId, r))),
  };
}

async function changesNothing(skillId: string, act: () => Promise<void>, runIds: string[] = []): Promise<void> {
  const before = await snapshot(skillId, runIds);
  await act();
  expect(await snapshot(skillId, runIds)).toEqual(before);
}

describe("evaluation cases", () => {
  let created: EvaluationCase[];

  it("POST /api/skills/:id/evaluation-cases creates a batch and answers it as a list (201)", async () => {
    const res = await api.post<List<EvaluationCase>>(
      casesPath(skill.id),
      {
        organizationId: owner.organizationId,
        cases: [
          {
            name: "greets Ada",
            input: { name: "Ada" },
            expectedOutput: "Hello Ada",
            assertions: [
              { type: "contains", value: "Ada" },
              { type: "regex", pattern: "^(Hello|Goodbye) ", flags: "i" },
            ],
          },
          { input: { name: "Grace" }, expectedOutput: null, assertions: [{ type: "max_latency_ms", value: 60_000 }] },
          { input: { name: "Linus" }, expectedOutput: "Hello Linus" },
        ],
      },
      { token: owner.token },
    );
    const body = ok(res, 201);
    expect(body.nextCursor).toBeNull();
    created = body.data;
    expect(created).toEqual([
      {
        id: id("evc"),
        skillId: skill.id,
        organizationId: owner.organizationId,
        name: "greets Ada",
        input: { name: "Ada" },
        expectedOutput: "Hello Ada",
        assertions: [
          { type: "contains", value: "Ada" },
          { type: "regex", pattern: "^(Hello|Goodbye) ", flags: "i" },
        ],
        createdAt: ISO,
      },
      {
        id: id("evc"),
        skillId: skill.id,
        organizationId: owner.organizationId,
        name: "",
        input: { name: "Grace" },
        expectedOutput: null,
        assertions: [{ type: "max_latency_ms", value: 60_000 }],
        createdAt: ISO,
      },
      expect.objectContaining({ name: "", input: { name: "Linus" }, expectedOutput: "Hello Linus", assertions: [] }),
    ]);
    expect(new Set(created.map((c) => c.id)).size).toBe(3);
  });

  it("GET /api/skills/:id/evaluation-cases lists them newest first, with pages", async () => {
    const all = await casesOf(skill.id);
    expect(all).toEqual({ data: [...created].reverse(), nextCursor: null });
    // An API key may omit organizationId; so may a user (the skill's organization).
    expect(await read(casesPath(skill.id), { limit: "200" }, ownerKey)).toEqual(all);
    expect(await read(casesPath(skill.id), { organizationId: owner.organizationId, limit: "200" })).toEqual(all);

    const first = await read<List<EvaluationCase>>(casesPath(skill.id), { limit: "2" });
    expect(first.data).toEqual(all.data.slice(0, 2));
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await read<List<EvaluationCase>>(casesPath(skill.id), {
      limit: "2",
      cursor: first.nextCursor ?? "",
    });
    expect(second).toEqual({ data: all.data.slice(2), nextCursor: null });
  });

  it("takes a key's own organization, keeps free-form JSON as sent, and is empty for a new skill", async () => {
    const input = JSON.parse('{"name":"Zed","$ref":"#/x","a.b":{"c.d":1},"__proto__":{"polluted":true}}');
    const [made] = ok(
      await api.post<List<EvaluationCase>>(
        casesPath(draftOnly.id),
        { cases: [{ input, expectedOutput: { z: 1, a: [null, true] } }] },
        { apiKey: ownerKey },
      ),
      201,
    ).data;
    expect(made?.organizationId).toBe(owner.organizationId);
    expect(JSON.stringify(made?.input)).toBe(JSON.stringify(input));
    expect(JSON.stringify(made?.expectedOutput)).toBe('{"z":1,"a":[null,true]}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await read(casesPath(publishedOnly.id))).toEqual({ data: [], nextCursor: null });
  });

  it("refuses bad input with 400 on the field and creates nothing", async () => {
    const org = owner.organizationId;
    const send =
      (body: unknown, credential = owner.token) =>
      () =>
        api.post(casesPath(skill.id), body, { token: credential });
    const withCase = (c: Record<string, unknown>) => send({ organizationId: org, cases: [c] });
    const asserting = (...assertions: unknown[]) => withCase({ input: { name: "x" }, assertions });
    await changesNothing(skill.id, () =>
      expectRefusals([
        ["no fields", send({}), "400 cases"],
        ["no cases", send({ organizationId: org }), "400 cases"],
        ["an empty batch", send({ organizationId: org, cases: [] }), "400 cases"],
        ["cases not a list", send({ organizationId: org, cases: { input: {} } }), "400 cases"],
        ["an unknown field", send({ organizationId: org, cases: [{ input: {} }], tags: [] }), "400 tags"],
        ["a user without organizationId", send({ cases: [{ input: {} }] }), "400 organizationId"],
        ["an empty organizationId", send({ organizationId: "", cases: [{ input: {} }] }), "400 organizationId"],
        ["a case without input", withCase({ name: "x" }), "400 cases[0].input"],
        ["an input that is not an object", withCase({ input: "Ada" }), "400 cases[0].input"],
        ["a list input", withCase({ input: ["Ada"] }), "400 cases[0].input"],
        ["a numeric name", withCase({ input: {}, name: 7 }), "400 cases[0].name"],
        ["an unknown case field", withCase({ input: {}, weight: 2 }), "400 cases[0].weight"],
        ["assertions not a list", withCase({ input: {}, assertions: { type: "contains" } }), "400 cases[0].assertions"],
        ["an assertion that is not an object", asserting("contains"), "400 cases[0].assertions[0]"],
        ["an assertion without type", asserting({ value: "x" }), "400 cases[0].assertions[0].type"],
        ["an unknown assertion type", asserting({ type: "similar", value: "x" }), "400 cases[0].assertions[0].type"],
        ["contains without value", asserting({ type: "contains" }), "400 cases[0].assertions[0].value"],
        ["contains a number", asserting({ type: "contains", value: 5 }), "400 cases[0].assertions[0].value"],
        [
          "a field another type takes",
          asserting({ type: "contains", value: "x", pattern: "y" }),
          "400 cases[0].assertions[0].pattern",
        ],
        ["a regex without pattern", asserting({ type: "regex" }), "400 cases[0].assertions[0].pattern"],
        ["a broken regex", asserting({ type: "regex", pattern: "(" }), "400 cases[0].assertions[0].pattern"],
        [
          "unknown regex flags",
          asserting({ type: "regex", pattern: "a", flags: "q" }),
          "400 cases[0].assertions[0].flags",
        ],
        [
          "a json_schema that is no schema",
          asserting({ type: "json_schema", schema: { type: "strange" } }),
          "400 cases[0].assertions[0].schema",
        ],
        [
          "json_path without equals",
          asserting({ type: "json_path", path: "$.a" }),
          "400 cases[0].assertions[0].equals",
        ],
        [
          "a json_path that is no path",
          asserting({ type: "json_path", path: "a[", equals: 1 }),
          "400 cases[0].assertions[0].path",
        ],
        [
          "a negative latency bound",
          asserting({ type: "max_latency_ms", value: -1 }),
          "400 cases[0].assertions[0].value",
        ],
        ["a string cost bound", asserting({ type: "max_cost_usd", value: "1" }), "400 cases[0].assertions[0].value"],
        ["a judge without rubric", asserting({ type: "llm_judge" }), "400 cases[0].assertions[0].rubric"],
        [
          "a judge threshold above 1",
          asserting({ type: "llm_judge", rubric: "polite", threshold: 2 }),
          "400 cases[0].assertions[0].threshold",
        ],
        [
          "the second assertion of the second case",
          send({
            organizationId: org,
            cases: [{ input: {} }, { input: {}, assertions: [{ type: "equals", value: 1 }, { type: "regex" }] }],
          }),
          "400 cases[1].assertions[1].pattern",
        ],
        [
          "a body that is not JSON",
          () =>
            api.request("POST", casesPath(skill.id), {
              token: owner.token,
              rawBody: "cases=1",
              headers: { "content-type": "application/x-www-form-urlencoded" },
            }),
          "400",
        ],
        [
          "malformed JSON",
          () =>
            api.request("POST", casesPath(skill.id), {
              token: owner.token,
              rawBody: "{",
              headers: { "content-type": "application/json" },
            }),
          "400",
        ],
        [
          "an unknown skill",
          () =>
            api.post(
              casesPath(unknownId("skl")),
              { organizationId: org, cases: [{ input: {} }] },
              { token: owner.token },
            ),
          "404",
        ],
      ]),
    );
  });

  it("refuses bad list queries with 400 and an unknown skill with 404", async () => {
    const list =
      (query: Record<string, string>, skillId = skill.id) =>
      () =>
        api.get(casesPath(skillId), { token: owner.token, query });
    await expectRefusals([
      ["limit 0", list({ limit: "0" }), "400 limit"],
      ["limit 201", list({ limit: "201" }), "400"],
      ["a word limit", list({ limit: "ten" }), "400 limit"],
      ["an unknown parameter", list({ sort: "name" }), "400 sort"],
      ["a forged cursor", list({ cursor: "not-a-cursor" }), "400 cursor"],
      ["an unknown skill", list({}, unknownId("skl")), "404"],
    ]);
  });
});

describe("evaluation runs", () => {
  let started: EvaluationStarted;

  it("POST /api/skills/:id/evaluations/run starts a run (202) that GET reads until it completes", async () => {
    const res = await api.post<EvaluationStarted>(
      runPath(skill.id),
      { organizationId: owner.organizationId },
      { token: owner.token },
    );
    started = ok(res, 202);
    expect(started).toEqual({ id: id("evr"), evaluationRunId: started.id, status: "queued" });

    const done = await api.waitForEvaluation(owner.token, skill.id, started.id);
    const cases = (await casesOf(skill.id)).data.reverse();
    expect(done).toMatchObject({
      id: started.id,
      evaluationRunId: started.id,
      skillId: skill.id,
      status: "completed",
      createdAt: ISO,
      completedAt: ISO,
    });
    // targets default to both versions that exist.
    expect([...done.targets].sort((a, b) => a.label.localeCompare(b.label))).toEqual([
      { label: "draft", skillVersionId: skill.draftVersionId },
      { label: "published", skillVersionId: skill.publishedVersionId },
    ]);
    expect(done.results.map((r) => r.caseId)).toEqual(cases.map((c) => c.id));
    const [ada, , linus] = done.results;
    // Ada's assertions hold for both versions (her expectedOutput is not checked beside them).
    expect(ada?.byTarget.published).toMatchObject({
      outcome: "pass",
      runId: id("srun"),
      output: { text: "Hello Ada" },
      assertions: [
        { type: "contains", passed: true, message: expect.any(String) },
        { type: "regex", passed: true, message: expect.any(String) },
      ],
      contractValid: true,
    });
    expect(ada?.byTarget.draft).toMatchObject({ outcome: "pass", output: { text: "Goodbye Ada" } });
    expect(ada?.change).toBe("output_changed");
    // Linus's expectedOutput alone is an equals assertion: "Goodbye Linus" regressed.
    expect(linus?.byTarget.published).toMatchObject({
      outcome: "pass",
      assertions: [{ type: "equals", passed: true }],
    });
    expect(linus?.byTarget.draft).toMatchObject({ outcome: "fail", output: { text: "Goodbye Linus" } });
    expect(linus?.change).toBe("regressed");
    expect(done.summary?.changes).toEqual({
      fixed: 0,
      regressed: 1,
      outputChanged: 2,
      unchanged: 0,
      stillFailing: 0,
      flaky: 0,
    });
    expect(done.contractValidity).toEqual({ valid: true, violations: [], breakingChanges: [] });
  });

  it("reads the run with an evaluations:read key, and runs named cases on one target with an evaluations:write key", async () => {
    const asKey = await read<EvaluationRun>(evaluationPath(skill.id, started.id), undefined, readOnlyKey);
    expect(asKey).toEqual(await api.getEvaluation(owner.token, skill.id, started.id));
    expect((await read<List<EvaluationCase>>(casesPath(skill.id), undefined, readOnlyKey)).data).toHaveLength(3);

    const [first] = (await casesOf(skill.id)).data;
    const one = ok(
      await api.post<EvaluationStarted>(
        runPath(skill.id),
        { targets: ["published"], caseIds: [first?.id] },
        { apiKey: writeOnlyKey },
      ),
      202,
    );
    const done = await api.waitForEvaluation(owner.token, skill.id, one.id);
    expect(done.targets).toEqual([{ label: "published", skillVersionId: skill.publishedVersionId }]);
    expect(done.results).toEqual([
      expect.objectContaining({ caseId: first?.id, change: null, byTarget: { published: expect.any(Object) } }),
    ]);
    expect(done.contractValidity?.breakingChanges).toEqual([]);
  });

  it("replays a start with the same Idempotency-Key (202, Idempotent-Replayed), and refuses the key with another body", async () => {
    const send = (key: string, targets: string[]) =>
      api.post<EvaluationStarted>(
        runPath(skill.id),
        { targets },
        { apiKey: ownerKey, headers: { "idempotency-key": key } },
      );
    const key = `eval-${randomUUID()}`;
    const first = ok(await send(key, ["draft"]), 202);
    const again = await send(key, ["draft"]);
    expect(ok(again, 202)).toEqual(first);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expectError(await send(key, ["published"]), 400, "invalid_argument");
    expect(ok(await send(`eval-${randomUUID()}`, ["draft"]), 202).id).not.toBe(first.id);
    await api.waitForEvaluation(owner.token, skill.id, first.id);
  });

  it("refuses bad input with 400 and starts nothing", async () => {
    const org = owner.organizationId;
    const send =
      (body: unknown, credential = owner.token) =>
      () =>
        api.post(runPath(skill.id), body, { token: credential });
    await changesNothing(
      skill.id,
      () =>
        expectRefusals([
          ["a user without organizationId", send({}), "400 organizationId"],
          ["an unknown field", send({ organizationId: org, mode: "async" }), "400 mode"],
          ["a target no label could be", send({ organizationId: org, targets: ["Staging!"] }), "400 targets[0]"],
          ["a label the skill does not have", send({ organizationId: org, targets: ["staging"] }), "409 targets[0]"],
          ["targets not a list", send({ organizationId: org, targets: "draft" }), "400 targets"],
          ["no target", send({ organizationId: org, targets: [] }), "400 targets"],
          ["a target twice", send({ organizationId: org, targets: ["draft", "draft"] }), "400 targets"],
          ["no case id", send({ organizationId: org, caseIds: [] }), "400 caseIds"],
          ["a numeric case id", send({ organizationId: org, caseIds: [1] }), "400 caseIds[0]"],
          [
            "a body that is not JSON",
            () =>
              api.request("POST", runPath(skill.id), {
                token: owner.token,
                rawBody: "targets=draft",
                headers: { "content-type": "text/plain" },
              }),
            "400",
          ],
        ]),
      [started.id],
    );
  });

  it("answers 400 for case ids that are no cases of the skill, 404 for unknown skills and runs", async () => {
    const org = owner.organizationId;
    const [mine] = (await casesOf(skill.id)).data;
    const strangerCase = (await read<List<EvaluationCase>>(casesPath(strangerSkill.id), undefined, stranger.token))
      .data[0];
    const draftOnlyCase = (await casesOf(draftOnly.id)).data[0];
    const withCases = (caseIds: unknown[]) => () =>
      api.post(runPath(skill.id), { organizationId: org, caseIds }, { token: owner.token });
    await changesNothing(
      skill.id,
      () =>
        expectRefusals([
          ["an unknown case", withCases([mine?.id, unknownId("evc")]), "400 caseIds[1]"],
          ["another organization's case", withCases([strangerCase?.id]), "400 caseIds[0]"],
          ["another skill's case", withCases([draftOnlyCase?.id]), "400 caseIds[0]"],
          [
            "an unknown skill",
            () => api.post(runPath(unknownId("skl")), { organizationId: org }, { token: owner.token }),
            "404",
          ],
          ["an unknown run", () => api.get(evaluationPath(skill.id, unknownId("evr")), { token: owner.token }), "404"],
          [
            "the run under another skill",
            () => api.get(evaluationPath(draftOnly.id, started.id), { token: owner.token }),
            "404",
          ],
        ]),
      [started.id],
    );
  });

  it("answers 409 for a target the skill does not have, or a skill without cases, and starts nothing", async () => {
    expectError(await api.post(runPath(publishedOnly.id), {}, { apiKey: ownerKey }), 409, "failed_precondition");
    await api.createEvaluationCases(owner.token, owner.organizationId, publishedOnly.id, [{ input: { name: "Ada" } }]);
    await expectRefusals([
      [
        "published of a draft-only skill",
        () =>
          api.post(
            runPath(draftOnly.id),
            { organizationId: owner.organizationId, targets: ["published"] },
            { token: owner.token },
          ),
        "409",
      ],
      [
        "draft of a published-only skill",
        () => api.post(runPath(publishedOnly.id), { targets: ["draft", "published"] }, { apiKey: ownerKey }),
        "409",
      ],
    ]);
    // Without targets, the one version that exists is evaluated.
    const only = await api.startEvaluation(ownerKey, undefined, publishedOnly.id);
    const done = await api.waitForEvaluation(owner.token, publishedOnly.id, only.id);
    expect(done.targets.map((t) => t.label)).toEqual(["published"]);
    expect(done.results[0]?.change).toBeNull();
  });
});

describe("scopes and organizations", () => {
  const routes = (skillId: string, runId: () => string) =>
    ({
      listCases: (o: { token?: string; apiKey?: string }) => api.get(casesPath(skillId), o),
      createCases: (o: { token?: string; apiKey?: string }, body?: Record<string, unknown>) =>
        api.post(casesPath(skillId), { cases: [{ input: { name: "x" } }], ...body }, o),
      start: (o: { token?: string; apiKey?: string }, body?: Record<string, unknown>) =>
        api.post(runPath(skillId), { ...body }, o),
      read: (o: { token?: string; apiKey?: string }) => api.get(evaluationPath(skillId, runId()), o),
    }) as const;

  let ownRunId = "";
  let strangerRunId = "";

  beforeAll(async () => {
    ownRunId = (await api.startEvaluation(owner.token, owner.organizationId, skill.id, { targets: ["published"] })).id;
    strangerRunId = (await api.startEvaluation(strangerKey, undefined, strangerSkill.id)).id;
    await api.waitForEvaluation(owner.token, skill.id, ownRunId);
    await api.waitForEvaluation(strangerKey, strangerSkill.id, strangerRunId);
  });

  it("answers 401 without credentials on every route", async () => {
    const r = routes(skill.id, () => ownRunId);
    for (const res of [await r.listCases({}), await r.createCases({}), await r.start({}), await r.read({})]) {
      expectError(res, 401, "unauthenticated");
    }
  });

  it("refuses a key without evaluations:write to start a run or create cases (403), and one without evaluations:read to read (403)", async () => {
    const r = routes(skill.id, () => ownRunId);
    await changesNothing(skill.id, async () => {
      expectError(await r.start({ apiKey: readOnlyKey }), 403, "permission_denied");
      expectError(await r.start({ apiKey: noEvaluationKey }), 403, "permission_denied");
      expectError(await r.createCases({ apiKey: readOnlyKey }), 403, "permission_denied");
      expectError(await r.createCases({ apiKey: noEvaluationKey }), 403, "permission_denied");
      expectError(await r.listCases({ apiKey: noEvaluationKey }), 403, "permission_denied");
      expectError(await r.read({ apiKey: noEvaluationKey }), 403, "permission_denied");
    }, [ownRunId]);
    // evaluations:read alone reads everything.
    expect((await r.listCases({ apiKey: readOnlyKey })).status).toBe(200);
    expect((await r.read({ apiKey: readOnlyKey })).status).toBe(200);
  });

  it("hides another organization's skills, cases and runs (404) from its users and keys", async () => {
    const theirs = routes(strangerSkill.id, () => strangerRunId);
    const cases = await read<List<EvaluationCase>>(casesPath(strangerSkill.id), undefined, stranger.token);
    await changesNothing(skill.id, async () => {
      for (const credential of [{ token: owner.token }, { apiKey: ownerKey }]) {
        expectError(await theirs.listCases(credential), 404, "not_found");
        expectError(await theirs.read(credential), 404, "not_found");
        expectError(await theirs.createCases(credential, { organizationId: owner.organizationId }), 404, "not_found");
        expectError(await theirs.start(credential, { organizationId: owner.organizationId }), 404, "not_found");
      }
      // Naming their organization does not help: the user is no member, the key belongs elsewhere.
      expectError(
        await theirs.createCases({ token: owner.token }, { organizationId: stranger.organizationId }),
        404,
        "not_found",
      );
      expectError(
        await theirs.start({ token: owner.token }, { organizationId: stranger.organizationId }),
        404,
        "not_found",
      );
      // Their run id under our skill is no run of ours either.
      expectError(await api.get(evaluationPath(skill.id, strangerRunId), { token: owner.token }), 404, "not_found");
      // A body organizationId other than the skill's is a 404 for the skill's own owner too.
      const mine = routes(skill.id, () => ownRunId);
      expectError(
        await mine.createCases({ token: stranger.token }, { organizationId: stranger.organizationId }),
        404,
        "not_found",
      );
      expectError(await mine.start({ apiKey: strangerKey }), 404, "not_found");
    }, [ownRunId]);
    expect(await read(casesPath(strangerSkill.id), undefined, stranger.token)).toEqual(cases);
  });
});

describe("the OpenAPI document", () => {
  it("documents every evaluation route as beta with request and response schemas", async () => {
    type Operation = {
      requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
      parameters?: { in: string; name: string }[];
      responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
      tags?: string[];
    };
    const doc = (
      await api.get<{
        paths: Record<string, Record<string, Operation>>;
        components: { schemas: Record<string, unknown> };
      }>("/api/openapi.json")
    ).body;
    const expected: [string, string, number, string[]][] = [
      ["get", "/api/skills/{id}/evaluation-cases", 200, ["400", "401", "403", "404"]],
      ["post", "/api/skills/{id}/evaluation-cases", 201, ["400", "401", "403", "404"]],
      ["post", "/api/skills/{id}/evaluations/run", 202, ["400", "401", "403", "404", "409"]],
      ["get", "/api/skills/{id}/evaluations/{evaluationRunId}", 200, ["401", "403", "404"]],
    ];
    for (const [method, path, status, errors] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      if (!op) continue;
      expect(op.tags).toEqual(["evaluations"]);
      expect(op.responses[String(status)]?.content?.["application/json"]?.schema, `${method} ${path}`).toBeDefined();
      expect(Object.keys(op.responses).filter((s) => s.startsWith("2"))).toEqual([String(status)]);
      for (const error of errors) {
        expect(op.responses[error]?.content?.["application/json"]?.schema?.$ref, `${method} ${path} ${error}`).toBe(
          "#/components/schemas/ErrorEnvelope",
        );
      }
      expect(op.parameters?.filter((p) => p.in === "path").map((p) => p.name)).toEqual(
        path.includes("evaluationRunId") ? ["id", "evaluationRunId"] : ["id"],
      );
      if (method === "post") {
        const body = op.requestBody?.content["application/json"]?.schema;
        expect(body, `${method} ${path} body`).toMatchObject({ type: "object", additionalProperties: false });
      }
    }
    const runRef =
      doc.paths["/api/skills/{id}/evaluations/{evaluationRunId}"]?.get?.responses["200"]?.content?.["application/json"]
        ?.schema;
    expect(runRef).toEqual({ $ref: "#/components/schemas/EvaluationRun" });
    const run = doc.components.schemas.EvaluationRun as { required?: string[] } | undefined;
    expect(run?.required).toEqual(
      expect.arrayContaining([
        "id",
        "evaluationRunId",
        "skillId",
        "status",
        "targets",
        "results",
        "summary",
        "contractValidity",
        "createdAt",
        "completedAt",
      ]),
    );
  });
});
