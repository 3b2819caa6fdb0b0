/**
 * Roles (docs/security.md "Roles"; issue #51) over real HTTP in both run modes: the built-in roles
 * listed with their scopes; a viewer reads prompts, runs and datasets and is refused every change
 * and every run (403 naming the permission); a custom role made of scopes grants exactly them, its
 * change applies to its members' next requests, and it cannot be deleted while held; bad roles are
 * refused with the field named and change nothing; only owners and admins manage roles.
 */
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_MODES, type RunningKiln } from "./support/run-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field.
type Loose = any;

const VARIABLES = { type: "object", properties: { name: { type: "string" } } };

describe.each(RUN_MODES)("roles in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let owner: string;
  let org: string;
  let promptId: string;

  /** A new user made a member of the organization with `role`; their access token. */
  const memberWith = async (role: string) => {
    const user = await api.signUp();
    const added = await api.post<Loose>(
      `/api/organizations/${org}/members`,
      { email: user.email, role },
      { token: owner },
    );
    expect(added.status, added.text).toBe(201);
    expect(added.body.membership.role).toBe(role);
    return { token: user.accessToken, userId: added.body.user.id as string };
  };
  const refused = (r: Loose, status: number, code: string, field?: string) => {
    expect(r.status, r.text).toBe(status);
    expect(r.body.error).toMatchObject({ code, message: expect.any(String) });
    if (field) expect(r.body.error.details.map((d: Loose) => d.field)).toContain(field);
    return r.body.error.message as string;
  };
  const runPrompt = (token: string) =>
    api.post<Loose>(`/api/prompts/${promptId}/run`, { organizationId: org, variables: { name: "Ada" } }, { token });
  const createPrompt = (token: string) =>
    api.post<Loose>(
      "/api/prompts",
      { organizationId: org, name: `p-${Math.random().toString(36).slice(2)}` },
      { token },
    );

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    owner = (await api.signUp()).accessToken;
    org = (await api.onboard(owner)).organization.id;
    const { prompt } = await api.createPublishedPrompt(owner, org, {
      systemPrompt: "Hello {{name}}",
      variablesSchema: VARIABLES,
      model: "local/echo",
    });
    promptId = prompt.id;
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("lists the built-in roles with their scopes to every member", async () => {
    const viewer = await memberWith("viewer");
    const r = await api.get<Loose>(`/api/organizations/${org}/roles`, { token: viewer.token });
    expect(r.status, r.text).toBe(200);
    const byName = Object.fromEntries(r.body.data.map((x: Loose) => [x.name, x]));
    expect(Object.keys(byName)).toEqual(["owner", "admin", "member", "viewer"]);
    expect(byName.owner).toMatchObject({ builtIn: true, scopes: null, createdAt: null });
    expect(byName.viewer.scopes).toContain("prompts:read");
    expect(byName.viewer.scopes.every((s: string) => s.endsWith(":read"))).toBe(true);
    expect(byName.viewer.scopes).not.toContain("audit:read");
  });

  it("lets a viewer read everything a member reads and refuses every change and run", async () => {
    const { token } = await memberWith("viewer");
    expect((await api.get(`/api/prompts/${promptId}`, { token })).status).toBe(200);
    expect((await api.get("/api/prompts", { token, query: { organizationId: org } })).status).toBe(200);
    expect((await api.get("/api/runs", { token, query: { organizationId: org } })).status).toBe(200);
    expect((await api.get("/api/datasets", { token, query: { organizationId: org } })).status).toBe(200);
    expect(refused(await runPrompt(token), 403, "permission_denied")).toMatch(/viewer .*runs:write/);
    expect(refused(await createPrompt(token), 403, "permission_denied")).toMatch(/prompts:write/);
    refused(
      await api.post(`/api/prompts/${promptId}/versions`, { systemPrompt: "x", variablesSchema: VARIABLES }, { token }),
      403,
      "permission_denied",
    );
    refused(await api.post("/api/datasets", { organizationId: org, name: "d" }, { token }), 403, "permission_denied");
    refused(
      await api.post(
        "/api/tools",
        {
          organizationId: org,
          toolKey: "t",
          name: "T",
          type: "manual_stub",
          config: { result: 1 },
          inputSchema: { type: "object" },
        },
        { token },
      ),
      403,
      "permission_denied",
    );
    refused(await api.post("/api/skills", { organizationId: org, name: "s" }, { token }), 403, "permission_denied");
    // Nothing was made for any of them.
    const prompts = await api.get<Loose>("/api/prompts", { token: owner, query: { organizationId: org } });
    expect(prompts.body.data).toHaveLength(1);
    // A member does all of it.
    const member = await memberWith("member");
    expect((await runPrompt(member.token)).status).toBe(201);
  });

  it("grants a custom role exactly its scopes, applies a change to its next requests, and keeps it while held", async () => {
    const created = await api.post<Loose>(
      `/api/organizations/${org}/roles`,
      { name: "runner", description: "runs what others write", scopes: ["prompts:read", "runs:read", "runs:write"] },
      { token: owner },
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: "runner",
      builtIn: false,
      scopes: ["prompts:read", "runs:read", "runs:write"],
    });
    const runner = await memberWith("runner");
    expect((await runPrompt(runner.token)).status).toBe(201);
    refused(await createPrompt(runner.token), 403, "permission_denied");

    const changed = await api.patch<Loose>(
      `/api/organizations/${org}/roles/runner`,
      { scopes: ["prompts:read", "prompts:write", "runs:read", "runs:write"] },
      { token: owner },
    );
    expect(changed.status, changed.text).toBe(200);
    // Within the services' authorization cache (5 s) the new scope applies.
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline && status !== 201) {
      status = (await createPrompt(runner.token)).status;
      if (status !== 201) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(201);

    refused(await api.delete(`/api/organizations/${org}/roles/runner`, { token: owner }), 409, "failed_precondition");
    const moved = await api.patch<Loose>(
      `/api/organizations/${org}/members/${runner.userId}`,
      { role: "member" },
      { token: owner },
    );
    expect(moved.status, moved.text).toBe(200);
    const deleted = await api.delete<Loose>(`/api/organizations/${org}/roles/runner`, { token: owner });
    expect(deleted.status, deleted.text).toBe(200);
    const listed = await api.get<Loose>(`/api/organizations/${org}/roles`, { token: owner });
    expect(listed.body.data.map((r: Loose) => r.name)).not.toContain("runner");
  });

  it("refuses bad roles with the field named, and lets only owners and admins manage them", async () => {
    const post = (body: unknown, token = owner) => api.post<Loose>(`/api/organizations/${org}/roles`, body, { token });
    refused(await post({ name: "viewer", scopes: ["prompts:read"] }), 400, "invalid_argument", "name");
    refused(await post({ name: "Bad Name", scopes: ["prompts:read"] }), 400, "invalid_argument", "name");
    refused(await post({ name: "empty", scopes: [] }), 400, "invalid_argument", "scopes");
    refused(await post({ name: "odd", scopes: ["prompts:fly"] }), 400, "invalid_argument");
    expect((await post({ name: "twice", scopes: ["runs:read"] })).status).toBe(201);
    refused(await post({ name: "twice", scopes: ["runs:read"] }), 409, "already_exists", "name");
    const user = await api.signUp();
    refused(
      await api.post<Loose>(
        `/api/organizations/${org}/members`,
        { email: user.email, role: "nobody" },
        { token: owner },
      ),
      400,
      "invalid_argument",
      "role",
    );
    const member = await memberWith("member");
    refused(await post({ name: "mine", scopes: ["runs:read"] }, member.token), 403, "permission_denied");
    refused(
      await api.delete(`/api/organizations/${org}/roles/twice`, { token: member.token }),
      403,
      "permission_denied",
    );
    // A member may lower their own role to viewer, never take a custom one.
    refused(
      await api.patch<Loose>(
        `/api/organizations/${org}/members/${member.userId}`,
        { role: "twice" },
        { token: member.token },
      ),
      403,
      "permission_denied",
    );
    const lowered = await api.patch<Loose>(
      `/api/organizations/${org}/members/${member.userId}`,
      { role: "viewer" },
      { token: member.token },
    );
    expect(lowered.status, lowered.text).toBe(200);
    // Another organization's roles are not there for an outsider.
    const outsider = (await api.signUp()).accessToken;
    refused(await api.get(`/api/organizations/${org}/roles`, { token: outsider }), 404, "not_found");
    const listed = await api.get<Loose>(`/api/organizations/${org}/roles`, { token: owner });
    expect(listed.body.data.map((r: Loose) => r.name)).toEqual(["owner", "admin", "member", "viewer", "twice"]);
  });
});
