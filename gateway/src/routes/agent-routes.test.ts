import { createLogger } from "@kiln/kit/logger";
import { buildTestPlatform } from "@kiln/testing/platform";
import { createTestClient, type ErrorBody, type TestClient, type TestResponse } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Agent authoring (api.md "Agents", "Version diffs": create version, save
 * workflow, validate, publish, diff, rollback) through the embedded platform: every route's happy
 * path, refused input, other organizations and scopes.
 */

type Embedded = Awaited<ReturnType<typeof buildTestPlatform>>;

interface VersionSummary {
  id: string;
  version: number;
  status: "draft" | "published";
  createdAt: string;
  publishedAt: string | null;
}
interface Agent {
  id: string;
  organizationId: string;
  name: string;
  description: string;
  publishedVersionId: string | null;
  createdAt: string;
  updatedAt: string;
  draftVersionId: string | null;
  versions: VersionSummary[];
  describedVersionId: string;
  workflow: Record<string, unknown>;
}
interface AgentVersion {
  id: string;
  agentId: string;
  version: number;
  status: "draft" | "published";
  workflow: Record<string, unknown>;
  createdAt: string;
  publishedAt: string | null;
}
interface Issue {
  path: string;
  code: string;
  message: string;
}
interface Validation {
  valid: boolean;
  errors: Issue[];
  warnings: Issue[];
}

let kiln: Embedded;
let api: TestClient;
let owner: { token: string; organizationId: string };
let ownerKey: string;
let readKey: string;
let stranger: { token: string; organizationId: string };
let strangerKey: string;
let promptId: string;
let promptVersionId: string;
let toolId: string;

beforeAll(async () => {
  kiln = await buildTestPlatform({ logger: createLogger({ name: "test", level: "silent" }) });
  api = createTestClient(kiln.gateway.app);
  owner = await newMember();
  ownerKey = (await api.createApiKey(owner.token, owner.organizationId, ["agents:read", "agents:write"])).key;
  readKey = (await api.createApiKey(owner.token, owner.organizationId, ["agents:read", "prompts:write"])).key;
  stranger = await newMember();
  strangerKey = (await api.createApiKey(stranger.token, stranger.organizationId, ["agents:read", "agents:write"])).key;
  const { prompt, version } = await api.createPublishedPrompt(owner.token, owner.organizationId, {
    systemPrompt: "Weather in {{city}}",
    variablesSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  });
  promptId = prompt.id;
  promptVersionId = version.id;
  toolId = (await api.createTool(owner.token, owner.organizationId)).id;
});

afterAll(async () => {
  await kiln?.close();
});

async function newMember() {
  const user = await api.signUp();
  const onboarding = await api.onboard(user.accessToken);
  return { token: user.accessToken, organizationId: onboarding.organization.id };
}

function ok<T>(res: TestResponse<T>, status = 200, stability = "beta"): T {
  expect(res.status, res.text).toBe(status);
  expect(res.headers["x-api-stability"]).toBe(stability);
  return res.body;
}

function expectError(res: TestResponse, status: number, code: string, field?: string) {
  expect(res.status, res.text).toBe(status);
  const { error } = res.body as ErrorBody;
  expect(error.code).toBe(code);
  if (field !== undefined) expect(error.details.map((d) => d.field)).toContain(field);
  return error;
}

const put = <T>(path: string, body: unknown, token = owner.token) => api.request<T>("PUT", path, { body, token });

async function newAgent(token = owner.token, organizationId: string | undefined = owner.organizationId) {
  return ok(await api.post<Agent>("/api/agents", { organizationId, name: "Planner" }, { token }), 201);
}

/** Valid: a prompt step (unpinned) branching to a tool step. */
function validWorkflow() {
  return {
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    entry: "weather",
    steps: [
      {
        id: "weather",
        type: "prompt",
        ref: { promptId },
        input: { city: "{{inputs.city}}" },
        next: [{ when: { "==": [{ var: "inputs.city" }, "Oslo"] }, to: "lookup" }],
      },
      { id: "lookup", type: "tool", ref: { toolId }, input: { city: "{{steps.weather.output.city}}" } },
    ],
    output: "{{steps.weather.output}}",
  };
}

describe("agent authoring", () => {
  it("creates, lists, reads (stable) and renames an agent", async () => {
    const agent = await newAgent();
    expect(agent).toEqual({
      id: expect.stringMatching(/^agt_[0-9A-Za-z]+$/),
      organizationId: owner.organizationId,
      name: "Planner",
      description: "",
      publishedVersionId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      draftVersionId: expect.stringMatching(/^av_/),
      versions: [expect.objectContaining({ version: 1, status: "draft", publishedAt: null })],
      describedVersionId: agent.draftVersionId,
      workflow: {},
    });
    const byKey = ok(await api.post<Agent>("/api/agents", { name: "Keyed" }, { token: ownerKey }), 201);
    expect(byKey.organizationId).toBe(owner.organizationId);
    const read = ok(await api.get<Agent>(`/api/agents/${agent.id}`, { token: ownerKey }), 200, "stable");
    expect(read.id).toBe(agent.id);
    const list = ok(await api.get<{ data: Agent[]; nextCursor: string | null }>("/api/agents", { token: ownerKey }));
    expect(list.data.map((a) => a.id)).toEqual(expect.arrayContaining([agent.id, byKey.id]));
    expect(list.nextCursor).toBeNull();
    const renamed = ok(
      await api.patch<Agent>(`/api/agents/${agent.id}`, { description: "plans" }, { token: owner.token }),
    );
    expect(renamed.description).toBe("plans");
  });

  it("validates with errors, saves, validates clean, publishes (pinned), diffs, versions and rolls back", async () => {
    const agent = await newAgent();
    const draftId = agent.draftVersionId as string;
    const broken = {
      ...validWorkflow(),
      entry: "start",
      steps: [{ ...validWorkflow().steps[0], input: { city: "{{inputs.town}}" } }, validWorkflow().steps[1]],
    };
    const v1 = ok(
      await api.post<Validation>(
        `/api/agent-versions/${draftId}/workflow/validate`,
        { workflow: broken },
        { token: owner.token },
      ),
    );
    expect(v1.valid).toBe(false);
    expect(v1.errors.map((e) => `${e.path} ${e.code}`)).toEqual([
      "entry unknown_step",
      "steps[0].input.city unknown_input",
    ]);
    // Publishing the saved (empty) workflow is refused with the errors.
    const refused = expectError(
      await api.post(`/api/agents/${agent.id}/publish`, {}, { token: owner.token }),
      409,
      "failed_precondition",
      "workflow.steps",
    );
    expect(refused.details.length).toBeGreaterThan(1);

    const saved = ok(await put<AgentVersion>(`/api/agent-versions/${draftId}/workflow`, { workflow: validWorkflow() }));
    expect(saved).toMatchObject({ id: draftId, status: "draft", workflow: validWorkflow() });
    const v2 = ok(
      await api.post<Validation>(`/api/agent-versions/${draftId}/workflow/validate`, {}, { token: ownerKey }),
    );
    expect(v2).toEqual({ valid: true, errors: [], warnings: [] });

    const published = ok(await api.post<Agent>(`/api/agents/${agent.id}/publish`, {}, { token: ownerKey }));
    expect(published.publishedVersionId).toBe(draftId);
    expect(published.draftVersionId).toBeNull();
    const steps = published.workflow.steps as { ref: Record<string, string> }[];
    expect(steps[0]?.ref).toEqual({ promptId, promptVersionId });
    expect(steps[1]?.ref).toEqual({ toolId, toolVersionId: expect.stringMatching(/^tv_/) });
    expectError(
      await put(`/api/agent-versions/${draftId}/workflow`, { workflow: validWorkflow() }),
      409,
      "failed_precondition",
    );

    const next = ok(await api.post<AgentVersion>(`/api/agents/${agent.id}/versions`, {}, { token: owner.token }), 201);
    expect(next).toMatchObject({ version: 2, status: "draft", workflow: published.workflow });
    expectError(
      await api.post(`/api/agents/${agent.id}/versions`, {}, { token: owner.token }),
      409,
      "failed_precondition",
      "draftVersionId",
    );
    const single = { ...validWorkflow(), steps: [{ ...validWorkflow().steps[0], next: undefined }] };
    ok(await put(`/api/agent-versions/${next.id}/workflow`, { workflow: JSON.parse(JSON.stringify(single)) }));
    ok(await api.post<Agent>(`/api/agents/${agent.id}/publish`, { versionId: next.id }, { token: owner.token }));

    const diff = ok(
      await api.get<{ from: unknown; to: unknown; changes: { op: string; path: string }[]; summary: string }>(
        `/api/agents/${agent.id}/versions/${next.id}/diff`,
        { token: owner.token, query: { against: draftId } },
      ),
    );
    expect(diff.from).toEqual({ versionId: draftId, version: 1 });
    expect(diff.changes).toContainEqual(expect.objectContaining({ op: "remove", path: "/workflow/steps/1" }));

    const rolled = ok(
      await api.post<Agent>(`/api/agents/${agent.id}/versions/${draftId}/rollback`, {}, { token: owner.token }),
    );
    expect(rolled.versions.map((v) => `${v.version} ${v.status}`)).toEqual([
      "1 published",
      "2 published",
      "3 published",
    ]);
    expect(rolled.publishedVersionId).toBe(rolled.versions[2]?.id);
    const v3 = ok(
      await api.get<Agent>(`/api/agents/${agent.id}`, {
        token: owner.token,
        query: { versionId: rolled.versions[2]?.id ?? "" },
      }),
      200,
      "stable",
    );
    expect(v3.workflow).toEqual(published.workflow);
  });

  it("refuses bad input", async () => {
    const agent = await newAgent();
    const draftId = agent.draftVersionId as string;
    expectError(
      await api.post("/api/agents", { organizationId: owner.organizationId }, { token: owner.token }),
      400,
      "invalid_argument",
    );
    expectError(
      await api.post("/api/agents", { name: "x" }, { token: owner.token }),
      400,
      "invalid_argument",
      "organizationId",
    );
    expectError(
      await api.post(
        "/api/agents",
        { organizationId: owner.organizationId, name: "x", extra: 1 },
        { token: owner.token },
      ),
      400,
      "invalid_argument",
    );
    expectError(
      await api.patch(`/api/agents/${agent.id}`, { name: "  " }, { token: owner.token }),
      400,
      "invalid_argument",
      "name",
    );
    expectError(
      await put(`/api/agent-versions/${draftId}/workflow`, { workflow: { steps: 3 } }),
      400,
      "invalid_argument",
      "workflow.steps",
    );
    expectError(await put(`/api/agent-versions/${draftId}/workflow`, { workflow: [] }), 400, "invalid_argument");
    expectError(await put(`/api/agent-versions/${draftId}/workflow`, {}), 400, "invalid_argument");
    expectError(
      await api.post(`/api/agent-versions/${draftId}/workflow/validate`, { workflow: 3 }, { token: owner.token }),
      400,
      "invalid_argument",
    );
    expectError(
      await api.get(`/api/agents/${agent.id}`, { token: owner.token, query: { versionId: "av_nope" } }),
      404,
      "not_found",
    );
    expectError(
      await api.get(`/api/agents/${agent.id}/versions/${draftId}/diff`, {
        token: owner.token,
        query: { against: "av_nope" },
      }),
      404,
      "not_found",
    );
    expectError(
      await api.post(`/api/agents/${agent.id}/versions/av_nope/rollback`, {}, { token: owner.token }),
      404,
      "not_found",
    );
    expectError(
      await api.post(`/api/agents/${agent.id}/versions`, { fromVersionId: "av_nope" }, { token: owner.token }),
      404,
      "not_found",
    );
    expectError(
      await api.post(`/api/agents/${agent.id}/publish`, { versionId: "av_nope" }, { token: owner.token }),
      404,
      "not_found",
    );
    const read = ok(await api.get<Agent>(`/api/agents/${agent.id}`, { token: owner.token }), 200, "stable");
    expect(read.versions).toHaveLength(1);
    expect(read.workflow).toEqual({});
  });

  it("hides other organizations' agents (404) and enforces scopes (403)", async () => {
    const agent = await newAgent();
    const draftId = agent.draftVersionId as string;
    for (const token of [stranger.token, strangerKey]) {
      expectError(await api.get(`/api/agents/${agent.id}`, { token }), 404, "not_found");
      expectError(await api.patch(`/api/agents/${agent.id}`, { name: "x" }, { token }), 404, "not_found");
      expectError(await api.post(`/api/agents/${agent.id}/versions`, {}, { token }), 404, "not_found");
      expectError(
        await put(`/api/agent-versions/${draftId}/workflow`, { workflow: validWorkflow() }, token),
        404,
        "not_found",
      );
      expectError(await api.post(`/api/agent-versions/${draftId}/workflow/validate`, {}, { token }), 404, "not_found");
      expectError(await api.post(`/api/agents/${agent.id}/publish`, {}, { token }), 404, "not_found");
      expectError(await api.get(`/api/agents/${agent.id}/versions/${draftId}/diff`, { token }), 404, "not_found");
      expectError(
        await api.post(`/api/agents/${agent.id}/versions/${draftId}/rollback`, {}, { token }),
        404,
        "not_found",
      );
    }
    expectError(
      await api.get("/api/agents", { token: stranger.token, query: { organizationId: owner.organizationId } }),
      404,
      "not_found",
    );
    expectError(
      await api.post("/api/agents", { organizationId: owner.organizationId, name: "x" }, { token: stranger.token }),
      404,
      "not_found",
    );
    // A stranger's reference is unknown to the owner's workflow.
    const theirTool = await api.createTool(stranger.token, stranger.organizationId);
    const foreign = {
      ...validWorkflow(),
      steps: [validWorkflow().steps[0], { ...validWorkflow().steps[1], ref: { toolId: theirTool.id } }],
    };
    const v = ok(
      await api.post<Validation>(
        `/api/agent-versions/${draftId}/workflow/validate`,
        { workflow: foreign },
        { token: owner.token },
      ),
    );
    expect(v.errors).toEqual([{ path: "steps[1].ref.toolId", code: "unknown_reference", message: expect.any(String) }]);

    // A read-only key reads and validates but cannot write.
    ok(await api.get(`/api/agents/${agent.id}`, { token: readKey }), 200, "stable");
    ok(await api.post(`/api/agent-versions/${draftId}/workflow/validate`, {}, { token: readKey }));
    expectError(await api.post("/api/agents", { name: "x" }, { token: readKey }), 403, "permission_denied");
    expectError(
      await put(`/api/agent-versions/${draftId}/workflow`, { workflow: validWorkflow() }, readKey),
      403,
      "permission_denied",
    );
    expectError(await api.post(`/api/agents/${agent.id}/publish`, {}, { token: readKey }), 403, "permission_denied");
    const promptsOnly = (await api.createApiKey(owner.token, owner.organizationId, ["prompts:read"])).key;
    expectError(await api.get(`/api/agents/${agent.id}`, { token: promptsOnly }), 403, "permission_denied");
    expectError(await api.get("/api/agents", { token: promptsOnly }), 403, "permission_denied");
    expectError(await api.get(`/api/agents/${agent.id}`), 401, "unauthenticated");
  });
});
