/**
 * Trace retention per organization (docs/observability.md "Retention") in both run modes:
 * `GET/PUT /api/traces/settings`, who may change it, bad values refused without a change, and one
 * organization's setting leaving another's alone. The sweep itself is tested against both stores
 * in services/execution/src/traces/trace-retention.int.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type FlowResult, runIdentityFlow, uniqueEmail } from "./support/identity-flow.js";
import { TRACE_MODES } from "./support/trace-modes.js";

describe.each(TRACE_MODES)("trace retention ($name)", (mode) => {
  let stop: () => Promise<void>;
  let base: string;
  let owner: FlowResult;
  let other: FlowResult;
  let memberToken: string;

  beforeAll(async () => {
    const started = await mode.start();
    stop = started.stop;
    base = started.baseUrl;
    owner = await runIdentityFlow(base, ["traces:read", "traces:write"]);
    other = await runIdentityFlow(base, ["traces:read"]);
    // A member (not an admin) of the owner's organization.
    const email = uniqueEmail();
    const signup = await call(base, "POST", "/api/auth/signup", {
      body: { email, password: "correct-horse-battery", fullName: "Mem Ber" },
    });
    expect(signup.status).toBe(201);
    memberToken = signup.body.accessToken;
    const added = await call(base, "POST", `/api/organizations/${owner.organizationId}/members`, {
      token: owner.token,
      body: { email, role: "member" },
    });
    expect(added.status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    await stop?.();
  });

  const settingsPath = (organizationId: string) => `/api/traces/settings?organizationId=${organizationId}`;
  const retentionOf = async (who: FlowResult) =>
    (await call(base, "GET", settingsPath(who.organizationId), { token: who.token })).body.retentionDays;

  it("answers 30 days until changed, to members and to API keys with traces:read", async () => {
    const byKey = await call(base, "GET", "/api/traces/settings", { apiKey: owner.apiKey });
    expect(byKey).toMatchObject({
      status: 200,
      body: { organizationId: owner.organizationId, retentionDays: 30, updatedAt: null },
    });
    const byMember = await call(base, "GET", settingsPath(owner.organizationId), { token: memberToken });
    expect(byMember).toMatchObject({ status: 200, body: { retentionDays: 30 } });
  });

  it("lets an owner change it, and leaves another organization's alone", async () => {
    const changed = await call(base, "PUT", settingsPath(owner.organizationId), {
      token: owner.token,
      body: { retentionDays: 7 },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ organizationId: owner.organizationId, retentionDays: 7 });
    expect(Date.parse(changed.body.updatedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(await retentionOf(owner)).toBe(7);
    expect(await retentionOf(other)).toBe(30);
  });

  it.each([0, 401, 2.5, "30"])("refuses retentionDays %s with 400 and changes nothing", async (value) => {
    const before = await retentionOf(owner);
    const r = await call(base, "PUT", settingsPath(owner.organizationId), {
      token: owner.token,
      body: { retentionDays: value },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_argument");
    expect(r.body.error.details).toContainEqual(expect.objectContaining({ field: "retentionDays" }));
    expect(await retentionOf(owner)).toBe(before);
  });

  it("refuses members and API keys (403) and other organizations' users (404), changing nothing", async () => {
    const before = await retentionOf(owner);
    const body = { retentionDays: 90 };
    const byMember = await call(base, "PUT", settingsPath(owner.organizationId), { token: memberToken, body });
    expect(byMember.status).toBe(403);
    expect(byMember.body.error.code).toBe("permission_denied");
    const byKey = await call(base, "PUT", "/api/traces/settings", { apiKey: owner.apiKey, body });
    expect(byKey.status).toBe(403);
    const outsider = await call(base, "PUT", settingsPath(owner.organizationId), { token: other.token, body });
    expect(outsider.status).toBe(404);
    const outsiderRead = await call(base, "GET", settingsPath(owner.organizationId), { token: other.token });
    expect(outsiderRead.status).toBe(404);
    expect(await retentionOf(owner)).toBe(before);
    const anonymous = await call(base, "GET", settingsPath(owner.organizationId));
    expect(anonymous.status).toBe(401);
  });
});
