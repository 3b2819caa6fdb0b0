/**
 * A user's organizations (issue #35 "Organization switcher"), in both run modes over real HTTP:
 * `GET /api/organizations` lists only the caller's own organizations with their role, page by
 * page; `GET /api/me` answers the caller; `POST /api/organizations` creates another with the caller as owner, usable at once; API
 * keys, anonymous callers and bad input are refused with nothing changed.
 */
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

interface Mine {
  organization: { id: string; name: string; plan: string };
  membership: { organizationId: string; userId: string; role: string };
}
interface Listed {
  data: Mine[];
  nextCursor: string | null;
}
interface ErrorBody {
  error: { code: string; message: string; details?: { field: string; issue: string }[] };
}

describe.each(PROVIDER_MODES)("a user's organizations in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  const list = (token: string, query = "") => api.get<Listed>(`/api/organizations${query}`, { token });

  it("lists the caller's organizations with their role, newest first, and nobody else's", async () => {
    const ada = await api.signUp();
    const own = (await api.onboard(ada.accessToken, "Ada Labs")).organization.id;
    const grace = await api.signUp();
    const hers = (await api.onboard(grace.accessToken, "Grace Works")).organization.id;
    const added = await api.post(
      `/api/organizations/${hers}/members`,
      { email: ada.user.email, role: "member" },
      { token: grace.accessToken },
    );
    expect(added.status).toBe(201);

    const adas = await list(ada.accessToken);
    expect(adas.status).toBe(200);
    expect(adas.body.data.map((m) => [m.organization.name, m.membership.role])).toEqual([
      ["Grace Works", "member"],
      ["Ada Labs", "owner"],
    ]);
    expect(adas.body.data.every((m) => m.membership.userId === ada.user.id)).toBe(true);
    expect(adas.body.nextCursor).toBeNull();
    const graces = await list(grace.accessToken);
    expect(graces.body.data.map((m) => m.organization.id)).toEqual([hers]);
    expect(graces.body.data.map((m) => m.organization.id)).not.toContain(own);

    const first = await list(ada.accessToken, "?limit=1");
    expect(first.body.data.map((m) => m.organization.id)).toEqual([hers]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await list(ada.accessToken, `?limit=1&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((m) => m.organization.id)).toEqual([own]);
    expect(second.body.nextCursor).toBeNull();

    const removed = await api.delete(`/api/organizations/${hers}/members/${ada.user.id}`, { token: grace.accessToken });
    expect(removed.status).toBe(200);
    expect((await list(ada.accessToken)).body.data.map((m) => m.organization.id)).toEqual([own]);

    const fresh = await api.signUp();
    const none = await list(fresh.accessToken);
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ data: [], nextCursor: null });
  });

  it("creates another organization with the caller as owner, which they use at once", async () => {
    const ada = await api.signUp();
    const first = (await api.onboard(ada.accessToken, "First")).organization.id;
    const created = await api.post<Mine>("/api/organizations", { name: "  Second  " }, { token: ada.accessToken });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      organization: { name: "Second", plan: "free" },
      membership: { userId: ada.user.id, role: "owner" },
    });
    const second = created.body.organization.id;
    expect(second).not.toBe(first);
    expect(created.body.membership.organizationId).toBe(second);
    expect((await list(ada.accessToken)).body.data.map((m) => m.organization.id)).toEqual([second, first]);
    const prompt = await api.createPrompt(ada.accessToken, second);
    expect(prompt.organizationId).toBe(second);

    // Onboarding stays the first organization's: it does not move to the new one.
    const again = await api.onboard(ada.accessToken, "Another");
    expect(again.organization.id).toBe(first);

    const outsider = await api.signUp();
    const read = await api.get<ErrorBody>(`/api/organizations/${second}`, { token: outsider.accessToken });
    expect(read.status).toBe(404);
  });

  it("creates one organization for a request sent again with the same Idempotency-Key", async () => {
    const ada = await api.signUp();
    await api.onboard(ada.accessToken, "First");
    const send = (name: string) =>
      api.post<Mine & ErrorBody>(
        "/api/organizations",
        { name },
        { token: ada.accessToken, headers: { "idempotency-key": `org-${ada.user.id}` } },
      );
    const created = await send("Retried");
    expect(created.status).toBe(201);
    const again = await send("Retried");
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body.organization.id).toBe(created.body.organization.id);
    // The same key with another body is refused, and makes nothing.
    const other = await send("Another name");
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe("invalid_argument");
    expect((await list(ada.accessToken)).body.data.map((m) => m.organization.name).sort()).toEqual([
      "First",
      "Retried",
    ]);
  });

  it("answers the signed-in user themselves at /api/me, never for a key or nobody", async () => {
    const ada = await api.signUp(undefined, { fullName: "Ada Lovelace" });
    const grace = await api.signUp();
    const me = await api.get<{ id: string; email: string; fullName: string }>("/api/me", { token: ada.accessToken });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: ada.user.id, email: ada.user.email, fullName: "Ada Lovelace" });
    const her = await api.get<{ id: string }>("/api/me", { token: grace.accessToken });
    expect(her.body.id).toBe(grace.user.id);
    const org = (await api.onboard(ada.accessToken)).organization.id;
    const key = await api.createApiKey(ada.accessToken, org, ["prompts:read"]);
    expect((await api.get("/api/me", { token: key.key })).status).toBe(403);
    expect((await api.get("/api/me")).status).toBe(401);
  });

  it("refuses bad input, API keys and anonymous callers, changing nothing", async () => {
    const ada = await api.signUp();
    const org = (await api.onboard(ada.accessToken)).organization.id;
    const before = (await list(ada.accessToken)).body.data;

    for (const body of [{ name: "" }, { name: "   " }, {}, { name: "x".repeat(201) }, { name: "ok", plan: "pro" }]) {
      const r = await api.post<ErrorBody>("/api/organizations", body, { token: ada.accessToken });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe("invalid_argument");
    }
    const blank = await api.post<ErrorBody>("/api/organizations", { name: "   " }, { token: ada.accessToken });
    expect(blank.body.error.details).toEqual([expect.objectContaining({ field: "name" })]);
    const badLimit = await list(ada.accessToken, "?limit=0");
    expect(badLimit.status).toBe(400);
    const badCursor = await list(ada.accessToken, "?cursor=nonsense");
    expect(badCursor.status).toBe(400);
    expect((await list(ada.accessToken)).body.data).toEqual(before);

    const key = await api.createApiKey(ada.accessToken, org, ["prompts:read"]);
    const byKey = await api.get<ErrorBody>("/api/organizations", { token: key.key });
    expect(byKey.status).toBe(403);
    const createByKey = await api.post<ErrorBody>("/api/organizations", { name: "Keyed" }, { token: key.key });
    expect(createByKey.status).toBe(403);
    const anonymous = await api.get<ErrorBody>("/api/organizations");
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe("unauthenticated");
    expect((await list(ada.accessToken)).body.data).toEqual(before);
  });
});
