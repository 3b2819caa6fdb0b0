import { createLogger } from "@kiln/kit/logger";
import { buildTestPlatform } from "@kiln/testing/platform";
import {
  createTestClient,
  type ErrorBody,
  type EvaluationCase,
  type List,
  type Skill,
  type TestClient,
  type TestResponse,
} from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The evaluation routes added for the console (api.md "Evaluations"): a skill's runs listed newest
 * first a page at a time, and a case deleted; through the embedded platform, with refused input,
 * scopes and other organizations (which change nothing).
 */

type Embedded = Awaited<ReturnType<typeof buildTestPlatform>>;
interface Member {
  token: string;
  organizationId: string;
}
interface RunItem {
  id: string;
  status: string;
  repeats: number;
  targets: { label: string }[];
  summary: { text: string } | null;
}

let kiln: Embedded;
let api: TestClient;
let owner: Member;
let stranger: Member;
let readKey: string;
let writeKey: string;
let skill: Skill;
let strangerSkill: Skill;
let cases: EvaluationCase[];
const runIds: string[] = [];

const NAME_SCHEMA = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
const runsPath = (skillId: string) => `/api/skills/${skillId}/evaluations`;
const casePath = (skillId: string, caseId: string) => `/api/skills/${skillId}/evaluation-cases/${caseId}`;

async function newMember(): Promise<Member> {
  const user = await api.signUp();
  const onboarding = await api.onboard(user.accessToken);
  return { token: user.accessToken, organizationId: onboarding.organization.id };
}

async function publishedSkill(member: Member): Promise<Skill> {
  const { prompt } = await api.createPublishedPrompt(member.token, member.organizationId, {
    systemPrompt: "Hello {{name}}",
    variablesSchema: NAME_SCHEMA,
  });
  const created = await api.createSkill(member.token, member.organizationId, { name: "Greeter" });
  await api.replaceSkillPrompts(member.token, created.draftVersionId ?? "", [{ promptId: prompt.id }]);
  return api.publishSkill(member.token, created.id);
}

function expectError(res: TestResponse, status: number, code: string, field?: string) {
  expect(res.status, res.text).toBe(status);
  const { error } = res.body as ErrorBody;
  expect(error.code).toBe(code);
  if (field !== undefined) expect(error.details.map((d) => d.field)).toContain(field);
}

const listCases = async (skillId: string, token = owner.token) =>
  (await api.get<List<EvaluationCase>>(`/api/skills/${skillId}/evaluation-cases`, { token, query: { limit: "200" } }))
    .body.data;

beforeAll(async () => {
  kiln = await buildTestPlatform({ logger: createLogger({ name: "test", level: "silent" }) });
  api = createTestClient(kiln.gateway.app);
  owner = await newMember();
  stranger = await newMember();
  readKey = (await api.createApiKey(owner.token, owner.organizationId, ["evaluations:read"])).key;
  writeKey = (await api.createApiKey(owner.token, owner.organizationId, ["evaluations:write"])).key;
  skill = await publishedSkill(owner);
  strangerSkill = await publishedSkill(stranger);
  cases = await api.createEvaluationCases(owner.token, owner.organizationId, skill.id, [
    { name: "Ada", input: { name: "Ada" }, assertions: [{ type: "contains", value: "Ada" }] },
    { name: "Grace", input: { name: "Grace" } },
  ]);
  await api.createEvaluationCases(stranger.token, stranger.organizationId, strangerSkill.id, [
    { input: { name: "X" } },
  ]);
  for (const repeats of [1, 2, 3]) {
    const started = await api.startEvaluation(owner.token, owner.organizationId, skill.id, { repeats });
    await api.waitForEvaluation(owner.token, skill.id, started.id);
    runIds.push(started.id);
  }
  const theirs = await api.startEvaluation(stranger.token, stranger.organizationId, strangerSkill.id);
  await api.waitForEvaluation(stranger.token, strangerSkill.id, theirs.id);
}, 60_000);

afterAll(async () => {
  await kiln?.close();
});

describe("GET /api/skills/:id/evaluations", () => {
  it("lists the skill's runs newest first, a page at a time, with their summaries and without results", async () => {
    const seen: RunItem[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const query: Record<string, string> = { limit: "2", ...(cursor ? { cursor } : {}) };
      const res = await api.get<List<RunItem>>(runsPath(skill.id), { token: owner.token, query });
      expect(res.status, res.text).toBe(200);
      expect(res.headers["x-api-stability"]).toBe("beta");
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data);
      cursor = res.body.nextCursor;
    }
    expect(seen.map((r) => r.id)).toEqual([...runIds].reverse());
    expect(seen.map((r) => r.repeats)).toEqual([3, 2, 1]);
    for (const r of seen) {
      expect(r).toMatchObject({ status: "completed", targets: [{ label: "published" }] });
      expect(r.summary?.text).toMatch(/^2 cases/);
      expect(r).not.toHaveProperty("results");
      expect(r).not.toHaveProperty("contractValidity");
    }
    // A key with evaluations:read lists them too.
    expect((await api.get<List<RunItem>>(runsPath(skill.id), { token: readKey })).body.data).toHaveLength(3);
  });

  it("refuses a bad limit or cursor (400), a key without evaluations:read (403), another organization (404)", async () => {
    expectError(
      await api.get(runsPath(skill.id), { token: owner.token, query: { limit: "0" } }),
      400,
      "invalid_argument",
      "limit",
    );
    expectError(
      await api.get(runsPath(skill.id), { token: owner.token, query: { limit: "201" } }),
      400,
      "invalid_argument",
      "limit",
    );
    expectError(
      await api.get(runsPath(skill.id), { token: owner.token, query: { cursor: "nope" } }),
      400,
      "invalid_argument",
      "cursor",
    );
    expectError(await api.get(runsPath(skill.id), { token: writeKey }), 403, "permission_denied");
    expectError(await api.get(runsPath(strangerSkill.id), { token: owner.token }), 404, "not_found");
    expectError(await api.get(runsPath(skill.id), { token: stranger.token }), 404, "not_found");
    expectError(await api.get(runsPath(`skl_${"0".repeat(32)}`), { token: owner.token }), 404, "not_found");
    expectError(await api.get(runsPath(skill.id)), 401, "unauthenticated");
  });
});

describe("DELETE /api/skills/:id/evaluation-cases/:caseId", () => {
  it("refuses other organizations, a read-only key and unknown cases, and deletes nothing", async () => {
    const [ada] = cases;
    const theirCase = (await listCases(strangerSkill.id, stranger.token))[0];
    const before = await listCases(skill.id);
    const theirsBefore = await listCases(strangerSkill.id, stranger.token);
    expectError(await api.delete(casePath(skill.id, ada?.id ?? ""), { token: stranger.token }), 404, "not_found");
    expectError(await api.delete(casePath(skill.id, ada?.id ?? ""), { token: readKey }), 403, "permission_denied");
    // Their case under our skill, our case under their skill: no such case.
    expectError(await api.delete(casePath(skill.id, theirCase?.id ?? ""), { token: owner.token }), 404, "not_found");
    expectError(
      await api.delete(casePath(strangerSkill.id, ada?.id ?? ""), { token: stranger.token }),
      404,
      "not_found",
    );
    expectError(
      await api.delete(casePath(skill.id, `evc_${"0".repeat(32)}`), { token: owner.token }),
      404,
      "not_found",
    );
    expectError(await api.delete(casePath(skill.id, ada?.id ?? "")), 401, "unauthenticated");
    expect(await listCases(skill.id)).toEqual(before);
    expect(await listCases(strangerSkill.id, stranger.token)).toEqual(theirsBefore);
  });

  it("deletes a case: answered as it was, gone from the list and from runs started after, kept in earlier reports", async () => {
    const [, grace] = cases;
    const res = await api.delete<EvaluationCase>(casePath(skill.id, grace?.id ?? ""), { token: writeKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual(grace);
    expect((await listCases(skill.id)).map((c) => c.name)).toEqual(["Ada"]);
    expectError(await api.delete(casePath(skill.id, grace?.id ?? ""), { token: owner.token }), 404, "not_found");
    const started = await api.startEvaluation(owner.token, owner.organizationId, skill.id);
    const after = await api.waitForEvaluation(owner.token, skill.id, started.id);
    expect(after.results.map((r) => r.caseId)).toEqual([cases[0]?.id]);
    const earlier = await api.getEvaluation(owner.token, skill.id, runIds[0] ?? "");
    expect(earlier.results.map((r) => r.caseId)).toEqual(cases.map((c) => c.id));
  });
});

describe("the OpenAPI document", () => {
  it("documents both routes as beta evaluation operations", async () => {
    type Operation = {
      operationId: string;
      tags: string[];
      "x-api-stability": string;
      responses: Record<string, unknown>;
    };
    const doc = (await api.get<{ paths: Record<string, Record<string, Operation>> }>("/api/openapi.json")).body;
    const list = doc.paths["/api/skills/{id}/evaluations"]?.get;
    const remove = doc.paths["/api/skills/{id}/evaluation-cases/{caseId}"]?.delete;
    expect(list).toMatchObject({ operationId: "listEvaluationRuns", tags: ["evaluations"], "x-api-stability": "beta" });
    expect(remove).toMatchObject({
      operationId: "deleteEvaluationCase",
      tags: ["evaluations"],
      "x-api-stability": "beta",
    });
    expect(remove?.responses["200"]).toMatchObject({
      content: { "application/json": { schema: { $ref: "#/components/schemas/EvaluationCase" } } },
    });
  });
});
