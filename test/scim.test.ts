/**
 * SCIM 2.0 provisioning end to end (issue #51, docs/scim.md), in both run modes over real HTTP:
 * Okta's and Microsoft Entra ID's documented request sequences replayed as they send them,
 * deactivation ending a member's access at once (their token, their API keys), group names giving
 * roles, tokens isolated between organizations and from /api, SCIM error bodies for bad input.
 */
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/identity-flow.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";
import {
  entraUser,
  expectScimError,
  GROUP_SCHEMA,
  oktaUser,
  PATCH_OP,
  type ScimClient,
  scimClient,
} from "./support/scim-client.js";

/** How long the services may reuse a positive authorization (API_KEY_CACHE_TTL_MS, default 5 s). */
const AUTHORIZATION_TTL_MS = 5_000;

interface Member {
  user: { id: string };
  membership: { role: string };
}

describe.each(PROVIDER_MODES)("SCIM provisioning in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let owner: { token: string; id: string; email: string };
  let organizationId: string;
  let scim: ScimClient;
  let other: { organizationId: string; scim: ScimClient; ownerToken: string };

  /** An organization of a new owner, with a SCIM token made for it. */
  async function organization() {
    const signedUp = await api.signUp();
    const id = (await api.onboard(signedUp.accessToken)).organization.id;
    const created = await api.post<{ scimToken: { id: string }; token: string }>(
      `/api/organizations/${id}/scim-tokens`,
      { name: "Okta" },
      { token: signedUp.accessToken },
    );
    expect(created.status).toBe(201);
    return { signedUp, id, token: created.body.token, tokenId: created.body.scimToken.id };
  }

  const roleOf = async (userId: string) => {
    const r = await api.get<{ data: Member[] }>(`/api/organizations/${organizationId}/members`, {
      token: owner.token,
      query: { limit: 200 },
    });
    return r.body.data.find((m) => m.user.id === userId)?.membership.role;
  };
  const orgStatus = (token: string) => api.get(`/api/organizations/${organizationId}`, { token }).then((r) => r.status);

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    const a = await organization();
    owner = { token: a.signedUp.accessToken, id: a.signedUp.user.id, email: a.signedUp.email };
    organizationId = a.id;
    scim = scimClient(running.base, a.token);
    const b = await organization();
    other = { organizationId: b.id, scim: scimClient(running.base, b.token), ownerToken: b.signedUp.accessToken };
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("makes tokens for owners and admins only, shows each once, lists them without secrets, revokes at once", async () => {
    const path = `/api/organizations/${organizationId}/scim-tokens`;
    const made = await api.post<{ scimToken: { id: string; name: string }; token: string }>(
      path,
      { name: "Entra ID" },
      { token: owner.token },
    );
    expect(made.status).toBe(201);
    expect(made.body.token).toMatch(/^scim_[0-9a-f]{32}_[0-9A-Za-z]{43}$/);
    expect(made.body.scimToken).toMatchObject({ name: "Entra ID", organizationId, revokedAt: null });
    const listed = await api.get<{ data: { id: string }[] }>(path, { token: owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((t) => t.id)).toContain(made.body.scimToken.id);
    expect(listed.text).not.toContain(made.body.token.split("_")[2]);

    const entra = scimClient(running.base, made.body.token);
    expect((await entra.get("/Users?count=1")).status).toBe(200);
    const revoked = await api.delete<{ revokedAt: string | null }>(`${path}/${made.body.scimToken.id}`, {
      token: owner.token,
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    expectScimError(await entra.get("/Users"), 401);

    const member = await api.signUp();
    await api.post(
      `/api/organizations/${organizationId}/members`,
      { email: member.email, role: "member" },
      {
        token: owner.token,
      },
    );
    expect((await api.post(path, { name: "x" }, { token: member.accessToken })).status).toBe(403);
    expect((await api.get(path, { token: member.accessToken })).status).toBe(403);
    expect((await api.post(path, { name: "x" }, { token: other.ownerToken })).status).toBe(404);
    const bad = await api.post<{ error: { code: string } }>(path, { name: "" }, { token: owner.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_argument");
    const key = await api.createApiKey(owner.token, organizationId, ["prompts:read"]);
    expect((await api.post(path, { name: "x" }, { apiKey: key.key })).status).toBe(403);
  });

  it("replays Okta's sequence: filter, create, get, group push, deactivate (access ends), reactivate by PUT", async () => {
    const alice = await api.signUp();
    const email = alice.email;
    const found = await scim.get(
      `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}&startIndex=1&count=100`,
    );
    expect(found.status).toBe(200);
    expect(found.headers.get("content-type")).toMatch(/^application\/scim\+json/);
    expect(found.body).toMatchObject({ totalResults: 0, Resources: [], startIndex: 1 });

    const created = await scim.post("/Users", oktaUser(email, "00u1okta"));
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    expect(id).toBe(alice.user.id);
    expect(created.headers.get("location")).toBe(`${running.base}/scim/v2/Users/${id}`);
    expect(created.body).toMatchObject({
      userName: email,
      active: true,
      externalId: "00u1okta",
      emails: [{ value: email, type: "work", primary: true }],
      name: { givenName: "Ada", familyName: "Lovelace" },
      meta: { resourceType: "User" },
    });
    expect(JSON.stringify(created.body)).not.toContain("not-stored-1!");
    expect(await roleOf(id)).toBe("member");
    expect(await orgStatus(alice.accessToken)).toBe(200);
    expectScimError(await scim.post("/Users", oktaUser(email, "00u2okta")), 409, "uniqueness");

    const got = await scim.get(`/Users/${id}`);
    expect(got.status).toBe(200);
    expect(got.body.userName).toBe(email);
    const byEmail = await scim.get(`/Users?filter=${encodeURIComponent(`emails[type eq "work"].value eq "${email}"`)}`);
    expect(byEmail.body.Resources.map((u: { id: string }) => u.id)).toEqual([id]);

    // Okta's group push: the group, then its members; kiln-admins makes admins.
    const group = await scim.post("/Groups", { schemas: [GROUP_SCHEMA], displayName: "kiln-admins", members: [] });
    expect(group.status).toBe(201);
    const pushed = await scim.patch(`/Groups/${group.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "add", path: "members", value: [{ value: id, display: email }] }],
    });
    expect(pushed.status).toBe(200);
    expect(pushed.body.members).toEqual([expect.objectContaining({ value: id })]);
    expect(await roleOf(id)).toBe("admin");
    expect((await scim.get(`/Users/${id}`)).body.groups).toEqual([
      expect.objectContaining({ value: group.body.id, display: "kiln-admins" }),
    ]);

    const key = await api.createApiKey(alice.accessToken, organizationId, ["prompts:read"]);
    const prompts = (credential: { token?: string; apiKey?: string }) =>
      api.get("/api/prompts", { ...credential, query: { organizationId } }).then((r) => r.status);
    expect(await prompts({ apiKey: key.key })).toBe(200);
    expect(await prompts({ token: alice.accessToken })).toBe(200);

    const deactivated = await scim.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", value: { active: false } }],
    });
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.active).toBe(false);
    // At once where identity answers, and the key at once on this gateway.
    expect(await orgStatus(alice.accessToken)).toBe(404);
    expect(await prompts({ apiKey: key.key })).toBe(401);
    expect(await roleOf(id)).toBeUndefined();
    const took = await eventually(
      async () => (await prompts({ token: alice.accessToken })) === 404,
      AUTHORIZATION_TTL_MS + 2_000,
    );
    expect(took).toBeLessThanOrEqual(AUTHORIZATION_TTL_MS + 2_000);
    const inactive = await scim.get(`/Users?filter=${encodeURIComponent("active eq false")}`);
    expect(inactive.body.Resources.map((u: { id: string }) => u.id)).toContain(id);

    const replaced = await scim.put(`/Users/${id}`, { ...oktaUser(email, "00u1okta"), displayName: "Ada King" });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ active: true, displayName: "Ada King" });
    expect(await orgStatus(alice.accessToken)).toBe(200);
    expect(await roleOf(id)).toBe("admin");
    // The keys a deactivation revoked stay revoked.
    expect(await prompts({ apiKey: key.key })).toBe(401);
  });

  it("replays Entra ID's sequence: filter, create, Replace ops with paths, group add and remove, deactivate, delete", async () => {
    const email = `grace-${Date.now()}@example.test`;
    const filter = encodeURIComponent(`userName eq "${email}"`);
    expect((await scim.get(`/Users?filter=${filter}`)).body.totalResults).toBe(0);
    const created = await scim.post("/Users", entraUser(email, "entra-object-1"));
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    expect(id).toMatch(/^usr_[0-9a-f]{32}$/);
    expect((await scim.get(`/Users?filter=${filter}`)).body.Resources.map((u: { id: string }) => u.id)).toEqual([id]);
    expect(await roleOf(id)).toBe("member");
    const byExternal = await scim.get(`/Users?filter=${encodeURIComponent('externalId eq "entra-object-1"')}`);
    expect(byExternal.body.totalResults).toBe(1);

    const renamed = `grace.hopper-${Date.now()}@example.test`;
    const updated = await scim.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: "Replace", path: "displayName", value: "Grace B. Hopper" },
        { op: "Replace", path: 'emails[type eq "work"].value', value: renamed },
        { op: "Replace", path: "name.givenName", value: "Amazing Grace" },
        { op: "Add", path: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", value: "Navy" },
      ],
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      displayName: "Grace B. Hopper",
      emails: [{ value: renamed, type: "work", primary: true }],
      name: { givenName: "Amazing Grace", familyName: "Hopper" },
      active: true,
    });

    const group = await scim.post("/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: "kiln-admins-entra",
      externalId: "entra-group-1",
      members: [],
    });
    expect(group.status).toBe(201);
    const groupPath = `/Groups/${group.body.id}`;
    const renamedGroup = await scim.patch(groupPath, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Replace", path: "displayName", value: "kiln-admins" }],
    });
    // kiln-admins is taken by Okta's group push in this organization: a second one is a clash.
    expectScimError(renamedGroup, 409, "uniqueness");
    const listed = await scim.get(`/Groups?filter=${encodeURIComponent('displayName eq "kiln-admins"')}`);
    expect(listed.body.totalResults).toBe(1);
    const adminsPath = `/Groups/${listed.body.Resources[0].id}`;

    const add = { schemas: [PATCH_OP], Operations: [{ op: "Add", path: "members", value: [{ value: id }] }] };
    expect((await scim.patch(adminsPath, add)).status).toBe(200);
    expect(await roleOf(id)).toBe("admin");
    const removed = await scim.patch(adminsPath, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Remove", path: `members[value eq "${id}"]` }],
    });
    expect(removed.status).toBe(200);
    expect(removed.body.members.map((m: { value: string }) => m.value)).not.toContain(id);
    expect(await roleOf(id)).toBe("member");
    expect((await scim.patch(adminsPath, add)).status).toBe(200);
    const removedByValue = await scim.patch(adminsPath, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Remove", path: "members", value: [{ value: id }] }],
    });
    expect(removedByValue.body.members.map((m: { value: string }) => m.value)).not.toContain(id);
    expect(await roleOf(id)).toBe("member");
    const unknownMember = await scim.patch(adminsPath, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Add", path: "members", value: [{ value: "usr_00000000000000000000000000000000" }] }],
    });
    expectScimError(unknownMember, 400, "invalidValue");

    const off = await scim.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Replace", path: "active", value: "False" }],
    });
    expect(off.status).toBe(200);
    expect(off.body.active).toBe(false);
    expect(await roleOf(id)).toBeUndefined();

    expect((await scim.delete(`/Users/${id}`)).status).toBe(204);
    expectScimError(await scim.get(`/Users/${id}`), 404);
    expectScimError(await scim.delete(`/Users/${id}`), 404);
    expect((await scim.delete(groupPath)).status).toBe(204);
    expectScimError(await scim.get(groupPath), 404);
  });

  it("deleting a provisioned member ends their access at once and revokes their API keys", async () => {
    const bob = await api.signUp();
    const created = await scim.post("/Users", oktaUser(bob.email, "00u-bob"));
    expect(created.status).toBe(201);
    const admins = await scim.get(`/Groups?filter=${encodeURIComponent('displayName eq "kiln-admins"')}`);
    const adminsId = admins.body.Resources[0].id;
    const current = await scim.get(`/Groups/${adminsId}`);
    const members = [
      ...current.body.members.map((m: { value: string }) => ({ value: m.value })),
      { value: bob.user.id },
    ];
    const put = await scim.put(`/Groups/${adminsId}`, { schemas: [GROUP_SCHEMA], displayName: "kiln-admins", members });
    expect(put.status).toBe(200);
    expect(await roleOf(bob.user.id)).toBe("admin");
    const key = await api.createApiKey(bob.accessToken, organizationId, ["prompts:read"]);
    const verify = () => api.post("/api/setup/verify", { organizationId }, { apiKey: key.key }).then((r) => r.status);
    expect(await verify()).toBe(200);

    expect((await scim.delete(`/Users/${bob.user.id}`)).status).toBe(204);
    expect(await orgStatus(bob.accessToken)).toBe(404);
    expect(await verify()).toBe(401);
    const keys = await api.get<{ data: { id: string; revokedAt: string | null }[] }>("/api/api-keys", {
      token: owner.token,
      query: { organizationId, limit: 200 },
    });
    expect(keys.body.data.find((k) => k.id === key.id)?.revokedAt).not.toBeNull();
    const after = await scim.get(`/Groups/${adminsId}`);
    expect(after.body.members.map((m: { value: string }) => m.value)).not.toContain(bob.user.id);
  });

  it("keeps the last owner, pages lists with startIndex and count, and answers the discovery endpoints", async () => {
    const self = await scim.post("/Users", oktaUser(owner.email, "00u-owner"));
    expect(self.status).toBe(201);
    expect(await roleOf(owner.id)).toBe("owner");
    const refused = await scim.patch(`/Users/${owner.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "active", value: false }],
    });
    expectScimError(refused, 409, "mutability");
    expect(await orgStatus(owner.token)).toBe(200);
    expect((await scim.get(`/Users/${owner.id}`)).body.active).toBe(true);

    for (let i = 0; i < 3; i++) {
      const e = `page-${i}-${Date.now()}@example.test`;
      expect((await scim.post("/Users", oktaUser(e, `page-${i}`))).status).toBe(201);
    }
    const all = await scim.get("/Users?count=200");
    const total: number = all.body.totalResults;
    expect(total).toBeGreaterThanOrEqual(5);
    const first = await scim.get("/Users?startIndex=1&count=2");
    expect(first.body).toMatchObject({ totalResults: total, startIndex: 1, itemsPerPage: 2 });
    const second = await scim.get("/Users?startIndex=3&count=2");
    expect(second.body).toMatchObject({ totalResults: total, startIndex: 3, itemsPerPage: 2 });
    const ids = (r: typeof first) => r.body.Resources.map((u: { id: string }) => u.id);
    expect([...ids(first), ...ids(second)]).toEqual(ids(all).slice(0, 4));
    expect((await scim.get("/Users?count=0")).body).toMatchObject({ totalResults: total, Resources: [] });

    const spc = await scim.get("/ServiceProviderConfig");
    expect(spc.status).toBe(200);
    expect(spc.body).toMatchObject({
      patch: { supported: true },
      filter: { supported: true },
      bulk: { supported: false },
    });
    const types = await scim.get("/ResourceTypes");
    expect(types.body.Resources.map((t: { id: string }) => t.id)).toEqual(["User", "Group"]);
    const schemas = await scim.get("/Schemas");
    expect(schemas.body.totalResults).toBe(2);
    const userSchema = await scim.get("/Schemas/urn:ietf:params:scim:schemas:core:2.0:User");
    expect(userSchema.body.attributes.map((a: { name: string }) => a.name)).toContain("userName");
    expectScimError(await scim.get("/ServiceProviderConfig", "scim_nope"), 401);
  });

  it("isolates organizations and credentials: a SCIM token never works on /api, nor an API key or user token on /scim/v2", async () => {
    const carol = await api.signUp();
    const mine = await scim.post("/Users", oktaUser(carol.email, "00u-carol"));
    expect(mine.status).toBe(201);
    expectScimError(await other.scim.get(`/Users/${carol.user.id}`), 404);
    expect((await other.scim.get("/Users")).body.Resources.map((u: { id: string }) => u.id)).not.toContain(
      carol.user.id,
    );
    expectScimError(
      await other.scim.patch(`/Users/${carol.user.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", value: { active: false } }],
      }),
      404,
    );
    expectScimError(await other.scim.delete(`/Users/${carol.user.id}`), 404);
    expect(await orgStatus(carol.accessToken)).toBe(200);
    const admins = await scim.get(`/Groups?filter=${encodeURIComponent('displayName eq "kiln-admins"')}`);
    expectScimError(await other.scim.get(`/Groups/${admins.body.Resources[0].id}`), 404);
    // The same person provisioned by another organization is another organization's member.
    const theirs = await other.scim.post("/Users", oktaUser(carol.email, "00u-carol-b"));
    expect(theirs.status).toBe(201);
    expect(theirs.body.groups).toEqual([]);

    const scimToken = (
      await api.post<{ token: string }>(
        `/api/organizations/${organizationId}/scim-tokens`,
        { name: "t" },
        {
          token: owner.token,
        },
      )
    ).body.token;
    const onApi = await api.get<{ error: { code: string; message: string } }>(`/api/organizations/${organizationId}`, {
      token: scimToken,
    });
    expect(onApi.status).toBe(401);
    expect(onApi.body.error.message).toMatch(/SCIM token/);
    expect((await api.get("/api/prompts", { apiKey: scimToken, query: { organizationId } })).status).toBe(401);
    const key = await api.createApiKey(owner.token, organizationId, ["prompts:read"]);
    expectScimError(await scim.get("/Users", key.key), 401);
    expectScimError(await scim.get("/Users", owner.token), 401);
    const none = await fetch(`${running.base}/scim/v2/Users`);
    expect(none.status).toBe(401);
  });

  it("answers bad filters and bodies with SCIM 400s that change nothing", async () => {
    const before = (await scim.get("/Users?count=0")).body.totalResults;
    for (const filter of [
      'userName ne "x"',
      "userName eq",
      'title eq "x"',
      'userName eq "a" or userName eq "b"',
      'active eq "yes"',
    ]) {
      expectScimError(await scim.get(`/Users?filter=${encodeURIComponent(filter)}`), 400, "invalidFilter");
    }
    expectScimError(await scim.get(`/Groups?filter=${encodeURIComponent('members eq "x"')}`), 400, "invalidFilter");
    expectScimError(await scim.get("/Users?startIndex=abc"), 400, "invalidValue");
    expectScimError(await scim.post("/Users", { userName: "" }), 400, "invalidValue");
    expectScimError(await scim.post("/Users", { userName: "not-an-address" }), 400, "invalidValue");
    expectScimError(await scim.post("/Users", { userName: 42 }), 400, "invalidValue");
    expectScimError(await scim.post("/Users", [1, 2]), 400, "invalidValue");
    expectScimError(await scim.sendText("POST", "/Users", "{"), 400, "invalidSyntax");
    const id = (await scim.get("/Users?count=1")).body.Resources[0].id;
    expectScimError(await scim.patch(`/Users/${id}`, { Operations: [] }), 400, "invalidSyntax");
    expectScimError(
      await scim.patch(`/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: "move", path: "active" }] }),
      400,
      "invalidSyntax",
    );
    expectScimError(
      await scim.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", path: "active", value: "maybe" }],
      }),
      400,
      "invalidValue",
    );
    expect((await scim.get("/Users?count=0")).body.totalResults).toBe(before);
    expect((await scim.get(`/Users/${id}`)).body.active).toBe(true);
    expectScimError(await scim.get("/NoSuchThing"), 404);
  });
});
