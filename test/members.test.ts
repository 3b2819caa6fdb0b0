/**
 * Organization members end to end (issue #35 "Organization"), in both run modes over real HTTP:
 * role changes and the last owner, removal cutting access, invitations accepted by a new user
 * (sign-up) and by an existing one, used and revoked tokens refused, non-admins refused (403),
 * other organizations not found (404), tokens never listed, bad input refused with nothing changed.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@kiln/kit/logger";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded } from "./support/embedded.js";
import { eventually } from "./support/identity-flow.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

/** How long the services may reuse a positive authorization (API_KEY_CACHE_TTL_MS, default 5 s). */
const AUTHORIZATION_TTL_MS = 5_000;

interface Member {
  user: { id: string; email: string };
  membership: { organizationId: string; userId: string; role: string; permissions: string[] };
}
interface Invitation {
  id: string;
  email: string;
  role: string;
  status: string;
  expiresAt: string;
  createdAt: string;
}
interface Created {
  invitation: Invitation;
  token: string;
  acceptUrl: string;
}
interface ErrorBody {
  error: { code: string; message: string; details?: { field: string; issue: string }[] };
}

describe.each(PROVIDER_MODES)("organization members in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let owner: string;
  let ownerId: string;
  let organizationId: string;
  let members: string;
  let invitations: string;

  /** A signed-up user, added to the organization with `role`. */
  async function joined(role: string) {
    const u = await api.signUp();
    const r = await api.post<Member>(members, { email: u.user.email, role }, { token: owner });
    expect(r.status).toBe(201);
    return { token: u.accessToken, id: u.user.id, email: u.user.email };
  }
  const roles = async () => {
    const r = await api.get<{ data: Member[] }>(members, { token: owner });
    expect(r.status).toBe(200);
    return Object.fromEntries(r.body.data.map((m) => [m.user.id, m.membership.role]));
  };
  const invite = (email: string, role: string, token = owner) =>
    api.post<Created | ErrorBody>(invitations, { email, role }, { token });

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    const signedUp = await api.signUp();
    owner = signedUp.accessToken;
    ownerId = signedUp.user.id;
    organizationId = (await api.onboard(owner)).organization.id;
    members = `/api/organizations/${organizationId}/members`;
    invitations = `/api/organizations/${organizationId}/invitations`;
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("changes roles with their permissions; the last owner stays; admins never touch owners", async () => {
    const admin = await joined("admin");
    const member = await joined("member");
    const promoted = await api.patch<Member>(`${members}/${member.id}`, { role: "admin" }, { token: admin.token });
    expect(promoted.status).toBe(200);
    expect(promoted.body.membership).toMatchObject({ userId: member.id, role: "admin" });
    expect(promoted.body.membership.permissions).toContain("manage_api_keys");

    const toOwner = await api.patch<ErrorBody>(`${members}/${member.id}`, { role: "owner" }, { token: admin.token });
    expect(toOwner.status).toBe(403);
    expect(toOwner.body.error).toMatchObject({ code: "permission_denied", message: expect.stringMatching(/owners/) });
    const demoteOwner = await api.patch<ErrorBody>(`${members}/${ownerId}`, { role: "member" }, { token: admin.token });
    expect(demoteOwner.status).toBe(403);
    const selfRaise = await api.patch<ErrorBody>(`${members}/${admin.id}`, { role: "owner" }, { token: admin.token });
    expect(selfRaise.status).toBe(403);

    const last = await api.patch<ErrorBody>(`${members}/${ownerId}`, { role: "admin" }, { token: owner });
    expect(last.status).toBe(409);
    expect(last.body.error).toMatchObject({
      code: "failed_precondition",
      message: expect.stringContaining("at least one owner"),
    });
    const removeLast = await api.delete<ErrorBody>(`${members}/${ownerId}`, { token: owner });
    expect(removeLast.status).toBe(409);

    const bad = await api.patch<ErrorBody>(`${members}/${member.id}`, { role: "boss" }, { token: owner });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_argument");
    const extra = await api.patch<ErrorBody>(`${members}/${member.id}`, { role: "member", x: 1 }, { token: owner });
    expect(extra.status).toBe(400);
    expect(await roles()).toMatchObject({ [ownerId]: "owner", [admin.id]: "admin", [member.id]: "admin" });

    const plain = await joined("member");
    const byMember = await api.patch<ErrorBody>(`${members}/${admin.id}`, { role: "member" }, { token: plain.token });
    expect(byMember.status).toBe(403);
    const unknown = await api.patch<ErrorBody>(
      `${members}/usr_${"0".repeat(32)}`,
      { role: "member" },
      { token: owner },
    );
    expect(unknown.status).toBe(404);
  });

  it("removing a member cuts their access: at once in identity, within the authorization TTL everywhere", async () => {
    const leaving = await joined("member");
    const prompts = () =>
      api.get("/api/prompts", { token: leaving.token, query: { organizationId } }).then((r) => r.status);
    expect(await prompts()).toBe(200);
    const removed = await api.delete<Member>(`${members}/${leaving.id}`, { token: owner });
    expect(removed.status).toBe(200);
    expect(removed.body.user.id).toBe(leaving.id);
    const org = await api.get<ErrorBody>(`/api/organizations/${organizationId}`, { token: leaving.token });
    expect(org.status).toBe(404);
    expect((await api.get(members, { token: leaving.token })).status).toBe(404);
    const took = await eventually(async () => (await prompts()) === 404, AUTHORIZATION_TTL_MS + 2_000);
    expect(took).toBeLessThanOrEqual(AUTHORIZATION_TTL_MS + 2_000);
    expect(await roles()).not.toHaveProperty(leaving.id);
    expect((await api.delete(`${members}/${leaving.id}`, { token: owner })).status).toBe(404);
  });

  it("invites a new user, who signs up with the token and joins with the role; the token works once", async () => {
    const email = `invited-${Date.now()}@example.test`;
    const created = await invite(email, "admin");
    expect(created.status).toBe(201);
    const { invitation, token, acceptUrl } = created.body as Created;
    expect(invitation).toMatchObject({ email, role: "admin", status: "pending" });
    expect(Date.parse(invitation.expiresAt) - Date.parse(invitation.createdAt)).toBe(7 * 24 * 3600 * 1000);
    expect(token).toMatch(/^inv_[0-9a-f]{32}_[0-9A-Za-z]{43}$/);
    expect(acceptUrl).toBe(`${running.base}/invite#${token}`);

    const listed = await api.get<{ data: Invitation[]; nextCursor: null }>(invitations, { token: owner });
    expect(listed.body.data.map((i) => i.id)).toContain(invitation.id);
    expect(listed.text).not.toContain(token.split("_")[2]);

    const wrong = await api.post<ErrorBody>("/api/auth/signup", {
      email: `someone-else-${Date.now()}@example.test`,
      password: "correct-horse-battery",
      invitationToken: token,
    });
    expect(wrong.status).toBe(403);
    const signedUp = await api.post<{ accessToken: string; membership: Member["membership"] }>("/api/auth/signup", {
      email,
      password: "correct-horse-battery",
      invitationToken: token,
    });
    expect(signedUp.status).toBe(201);
    expect(signedUp.body.membership).toMatchObject({ organizationId, role: "admin" });
    const verified = await api.post<{ organization: { id: string } }>(
      "/api/setup/verify",
      {},
      { token: signedUp.body.accessToken },
    );
    expect(verified.body.organization.id).toBe(organizationId);

    const other = await api.signUp();
    const reused = await api.post<ErrorBody>("/api/invitations/accept", { token }, { token: other.accessToken });
    expect(reused.status).toBe(409);
    expect(reused.body.error.message).toContain("already been used");
    expect(
      (await api.get<{ data: Invitation[] }>(invitations, { token: owner })).body.data.map((i) => i.id),
    ).not.toContain(invitation.id);
  });

  it("an existing user accepts signed in; revoked, forged and foreign tokens are refused", async () => {
    const existing = await api.signUp();
    await api.onboard(existing.accessToken, "Their own");
    const created = (await invite(existing.user.email, "member")).body as Created;
    const revokedOne = (await invite(existing.user.email, "admin")).body as Created;
    const revoked = await api.delete<Invitation>(`${invitations}/${revokedOne.invitation.id}`, { token: owner });
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe("revoked");
    const refused = await api.post<ErrorBody>(
      "/api/invitations/accept",
      { token: revokedOne.token },
      { token: existing.accessToken },
    );
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain("revoked");
    const forged = await api.post<ErrorBody>(
      "/api/invitations/accept",
      { token: `${created.invitation.id}_${"A".repeat(43)}` },
      { token: existing.accessToken },
    );
    expect(forged.status).toBe(404);
    const stranger = await api.signUp();
    const foreign = await api.post<ErrorBody>(
      "/api/invitations/accept",
      { token: created.token },
      { token: stranger.accessToken },
    );
    expect(foreign.status).toBe(403);

    const accepted = await api.post<{ organization: { id: string }; membership: Member["membership"] }>(
      "/api/invitations/accept",
      { token: created.token },
      { token: existing.accessToken },
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ organization: { id: organizationId }, membership: { role: "member" } });
    expect(await roles()).toMatchObject({ [existing.user.id]: "member" });
    const twice = await invite(existing.user.email, "member");
    expect(twice.status).toBe(409);
    expect((twice.body as ErrorBody).error.code).toBe("already_exists");
  });

  it("only owners and admins manage invitations; other organizations see nothing", async () => {
    const member = await joined("member");
    expect((await invite("x@example.test", "member", member.token)).status).toBe(403);
    expect((await api.get(invitations, { token: member.token })).status).toBe(403);
    const pending = (await invite(`pending-${Date.now()}@example.test`, "member")).body as Created;

    const outsider = await api.signUp();
    const theirs = (await api.onboard(outsider.accessToken)).organization.id;
    expect((await invite("x@example.test", "member", outsider.accessToken)).status).toBe(404);
    expect((await api.get(invitations, { token: outsider.accessToken })).status).toBe(404);
    expect((await api.delete(`${invitations}/${pending.invitation.id}`, { token: outsider.accessToken })).status).toBe(
      404,
    );
    expect(
      (
        await api.delete(`/api/organizations/${theirs}/invitations/${pending.invitation.id}`, {
          token: outsider.accessToken,
        })
      ).status,
    ).toBe(404);
    expect(
      (await api.patch(`${members}/${member.id}`, { role: "admin" }, { token: outsider.accessToken })).status,
    ).toBe(404);
    expect((await api.delete(`${members}/${member.id}`, { token: outsider.accessToken })).status).toBe(404);

    const bad = await invite("not an address", "member");
    expect(bad.status).toBe(400);
    expect((bad.body as ErrorBody).error.details).toEqual([{ field: "email", issue: "must be an e-mail address" }]);
    const listed = await api.get<{ data: Invitation[] }>(invitations, { token: owner });
    expect(listed.body.data.map((i) => i.email)).not.toContain("not an address");

    const key = await api.createApiKey(owner, organizationId, ["prompts:read"]);
    expect((await api.get(invitations, { token: key.key })).status).toBe(403);
  });
});

describe("invitation tokens in the logs", () => {
  it("never reach a log line, at debug level, from creation through the link to acceptance", async () => {
    const lines: string[] = [];
    const logger = createLogger({ name: "test", level: "debug" }, { write: (line: string) => lines.push(line) });
    // A console to serve the link's page (its content does not matter here).
    const consoleDir = mkdtempSync(join(tmpdir(), "kiln-console-"));
    writeFileSync(join(consoleDir, "index.html"), "<!doctype html><title>Kiln</title>");
    const { kiln, baseUrl } = await startEmbedded({ logger, consoleDir });
    try {
      const api = createTestClient(baseUrl);
      const owner = await api.signUp();
      const organizationId = (await api.onboard(owner.accessToken)).organization.id;
      const invitations = `/api/organizations/${organizationId}/invitations`;
      const created = await api.post<Created>(
        invitations,
        { email: "linus@example.test", role: "member" },
        { token: owner.accessToken },
      );
      expect(created.status).toBe(201);
      const { token, acceptUrl } = created.body;
      // The console's page as a browser asks for it: the fragment stays in the browser.
      const page = await fetch(new URL(acceptUrl), { headers: { accept: "text/html" } });
      expect(page.status).toBe(200);
      const signedUp = await api.post("/api/auth/signup", {
        email: "linus@example.test",
        password: "correct-horse-battery",
        invitationToken: token,
      });
      expect(signedUp.status).toBe(201);
      const second = await api.post<Created>(
        invitations,
        { email: "ken@example.test", role: "member" },
        {
          token: owner.accessToken,
        },
      );
      const ken = await api.signUp("ken@example.test");
      expect(
        (await api.post("/api/invitations/accept", { token: second.body.token }, { token: ken.accessToken })).status,
      ).toBe(200);
      expect(lines.length).toBeGreaterThan(10);
      expect(lines.some((l) => l.includes("/invite"))).toBe(true);
      for (const secret of [token, second.body.token].map((t) => t.split("_")[2] ?? "?")) {
        expect(lines.filter((l) => l.includes(secret))).toEqual([]);
      }
    } finally {
      await kiln.close();
    }
  }, 60_000);
});
