/**
 * The audit log end to end (issue #51, docs/governance.md), in both run modes over real HTTP:
 * representative changes (a prompt made, a version published, a label moved, an API key made and
 * revoked, a member's role changed, a refused sign-in) each leave an entry with its actor, action,
 * target and request id; the filters, the cursor and the JSON Lines export; another organization
 * sees none of it; the chain verifies, and an entry edited or deleted in the store breaks it.
 */
import { randomUUID } from "node:crypto";
import type { Store } from "@kiln/kit/store";
import { openEmbeddedData } from "@kiln/launcher/data-dir";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { oktaUser, PATCH_OP, scimClient } from "./support/scim-client.js";

interface Entry {
  id: string;
  sequence: number;
  actor: { type: string; id: string; organizationId: string };
  action: string;
  target: { type: string; id: string };
  requestId: string;
  sourceAddress: string;
  changedFields: string[];
  outcome: string;
}

/** Edits (or deletes) one organization's entry right in the identity store: what verification must catch. */
interface Tamper {
  edit(organizationId: string, sequence: number, field: string, value: string): Promise<void>;
  remove(organizationId: string, sequence: number): Promise<void>;
}

const key = (org: string, seq: number) => `${org}:${String(seq).padStart(12, "0")}`;

const MODES = [
  {
    name: "embedded mode",
    async start() {
      const data = await openEmbeddedData(":memory:");
      const { kiln, baseUrl } = await startEmbedded({ data });
      const store: Store = data.stores.identity;
      const tamper: Tamper = {
        edit: (org, seq, field, value) =>
          store
            .collection("audit_log")
            .updateOne({ _id: key(org, seq) }, { $set: { [field]: value } })
            .then(() => {}),
        remove: (org, seq) =>
          store
            .collection("audit_log")
            .deleteOne({ _id: key(org, seq) })
            .then(() => {}),
      };
      return { base: baseUrl, tamper, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start() {
      const kiln = await startDistributed({ mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") });
      const driver = new MongoClient(inject("mongoUrl"));
      const log = driver.db(kiln.databases.identity).collection<{ _id: string }>("audit_log");
      const tamper: Tamper = {
        edit: (org, seq, field, value) =>
          log.updateOne({ _id: key(org, seq) }, { $set: { [field]: value } }).then(() => {}),
        remove: (org, seq) => log.deleteOne({ _id: key(org, seq) }).then(() => {}),
      };
      return {
        base: kiln.gatewayUrl,
        tamper,
        stop: async () => {
          await driver.close();
          await kiln.stop();
        },
      };
    },
  },
];

describe.each(MODES)("audit log in $name", (mode) => {
  let stop: () => Promise<void>;
  let tamper: Tamper;
  let api: TestClient;
  let base: string;
  let owner: { token: string; id: string; email: string };
  let organizationId: string;
  let promptId: string;
  let memberId: string;
  let keyId: string;
  const requestIds: Record<string, string> = {};

  const log = (query: Record<string, string | number | undefined>, token = owner.token) =>
    api.get<{ data: Entry[]; nextCursor: string | null }>("/api/audit-log", {
      token,
      query: { organizationId, ...query },
    });
  const rid = (name: string) => {
    requestIds[name] = `req_audit_${name}_${randomUUID().slice(0, 8)}`;
    return { "x-request-id": requestIds[name] };
  };
  const only = async (action: string) => {
    const r = await log({ action });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    return r.body.data[0] as Entry;
  };

  beforeAll(async () => {
    const running = await mode.start();
    stop = running.stop;
    tamper = running.tamper;
    base = running.base;
    api = createTestClient(base);
    const signedUp = await api.signUp();
    owner = { token: signedUp.accessToken, id: signedUp.user.id, email: signedUp.email };
    organizationId = (await api.onboard(owner.token)).organization.id;

    const prompt = await api.post<{ id: string }>(
      "/api/prompts",
      { organizationId, name: "Greeter", description: "says hello" },
      { token: owner.token, headers: rid("prompt") },
    );
    expect(prompt.status).toBe(201);
    promptId = prompt.body.id;
    const version = await api.createPromptVersion(owner.token, promptId, { systemPrompt: "Hello" });
    const published = await api.post(
      `/api/prompts/${promptId}/publish`,
      { versionId: version.id },
      {
        token: owner.token,
        headers: rid("publish"),
      },
    );
    expect(published.status).toBe(200);
    const moved = await api.put(
      `/api/prompts/${promptId}/labels/staging`,
      { versionId: version.id },
      {
        token: owner.token,
        headers: rid("label"),
      },
    );
    expect(moved.status).toBe(200);
    const created = await api.post<{ id: string }>(
      "/api/api-keys",
      { organizationId, name: "auditor", scopes: ["audit:read"] },
      { token: owner.token, headers: rid("key") },
    );
    expect(created.status).toBe(201);
    keyId = created.body.id;
    const other = await api.signUp();
    memberId = other.user.id;
    const added = await api.post(
      `/api/organizations/${organizationId}/members`,
      { email: other.email, role: "member" },
      {
        token: owner.token,
      },
    );
    expect(added.status).toBe(201);
    const changed = await api.patch(
      `/api/organizations/${organizationId}/members/${memberId}`,
      { role: "admin" },
      {
        token: owner.token,
        headers: rid("role"),
      },
    );
    expect(changed.status).toBe(200);
    const refused = await api.post(
      "/api/auth/token",
      { email: owner.email, password: "not-the-password" },
      {
        headers: rid("signin"),
      },
    );
    expect(refused.status).toBe(401);
    const signedIn = await api.post(
      "/api/auth/token",
      { email: owner.email, password: signedUp.password },
      {
        headers: rid("signedin"),
      },
    );
    expect(signedIn.status).toBe(200);
  }, 120_000);

  afterAll(() => stop?.());

  it("records each change with its actor, action, target and request id", async () => {
    const prompt = await only("prompt.created");
    expect(prompt).toMatchObject({
      actor: { type: "user", id: owner.id, organizationId },
      target: { type: "prompt", id: promptId },
      requestId: requestIds.prompt,
      outcome: "success",
    });
    expect(prompt.changedFields).toEqual(["description", "name", "organizationId"]);
    expect(prompt.sourceAddress).toMatch(/127\.0\.0\.1/);
    expect(await only("prompt.version.published")).toMatchObject({
      target: { type: "prompt", id: promptId },
      requestId: requestIds.publish,
    });
    expect(await only("prompt.label.moved")).toMatchObject({
      target: { type: "prompt_label", id: `${promptId}:staging` },
      requestId: requestIds.label,
      changedFields: ["versionId"],
    });
    expect(await only("api_key.created")).toMatchObject({
      target: { type: "api_key", id: keyId },
      requestId: requestIds.key,
    });
    expect(await only("member.role.changed")).toMatchObject({
      target: { type: "user", id: memberId },
      requestId: requestIds.role,
      changedFields: ["role"],
    });
    expect(await only("user.sign_in_failed")).toMatchObject({
      actor: { type: "anonymous", id: "" },
      target: { type: "user", id: owner.email },
      requestId: requestIds.signin,
      outcome: "failure",
      changedFields: [],
    });
    expect(await only("user.signed_in")).toMatchObject({
      actor: { type: "user", id: owner.id, organizationId },
      target: { type: "user", id: owner.email.toLowerCase() },
      requestId: requestIds.signedin,
      outcome: "success",
    });
  });

  it("an API key with audit:read reads the log; a revoked key's revocation is an entry", async () => {
    const made = await api.createApiKey(owner.token, organizationId, ["audit:read"], "reader");
    const asKey = await api.get<{ data: Entry[] }>("/api/audit-log", {
      apiKey: made.key,
      query: { action: "api_key.created" },
    });
    expect(asKey.status).toBe(200);
    expect(asKey.body.data.length).toBeGreaterThanOrEqual(1);
    const without = await api.createApiKey(owner.token, organizationId, ["prompts:read"], "no audit");
    expect((await api.get("/api/audit-log", { apiKey: without.key })).status).toBe(403);
    expect((await api.delete(`/api/api-keys/${made.id}`, { token: owner.token })).status).toBe(200);
    const revoked = await log({ action: "api_key.revoked" });
    expect(revoked.body.data.map((e) => e.target.id)).toContain(made.id);
  });

  it("filters, pages by cursor and exports JSON Lines", async () => {
    const byTarget = await log({ targetType: "prompt", targetId: promptId });
    expect(new Set(byTarget.body.data.map((e) => e.action))).toEqual(
      new Set(["prompt.created", "prompt.version.published"]),
    );
    const byActor = await log({ actor: owner.id, limit: 200 });
    expect(byActor.body.data.every((e) => e.actor.id === owner.id)).toBe(true);
    expect((await log({ from: new Date(Date.now() + 60_000).toISOString() })).body.data).toEqual([]);
    const all = (await log({ limit: 200 })).body.data;
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await log({ limit: 2, cursor });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((e) => e.sequence));
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(all.map((e) => e.sequence));
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    const jsonl = await fetch(`${base}/api/audit-log?organizationId=${organizationId}&limit=200`, {
      headers: { authorization: `Bearer ${owner.token}`, accept: "application/x-ndjson" },
    });
    expect(jsonl.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = (await jsonl.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Entry);
    expect(lines.map((e) => e.id)).toEqual(all.map((e) => e.id));
  });

  it("shows another organization nothing of it", async () => {
    const stranger = await api.signUp();
    const theirs = (await api.onboard(stranger.accessToken)).organization.id;
    expect((await log({}, stranger.accessToken)).status).toBe(404);
    expect(
      (await api.get("/api/audit-log/verify", { token: stranger.accessToken, query: { organizationId } })).status,
    ).toBe(404);
    const own = await api.get<{ data: Entry[] }>("/api/audit-log", {
      token: stranger.accessToken,
      query: { organizationId: theirs },
    });
    expect(own.status).toBe(200);
    expect(own.body.data.some((e) => e.target.id === promptId || e.actor.id === owner.id)).toBe(false);
    // A plain member is refused too.
    const member = await api.signUp();
    await api.post(
      `/api/organizations/${organizationId}/members`,
      { email: member.email, role: "member" },
      { token: owner.token },
    );
    expect((await log({}, member.accessToken)).status).toBe(403);
  });

  it("records a change once when its Idempotency-Key replays it", async () => {
    const send = () =>
      api.post<{ id: string }>(
        "/api/datasets",
        { organizationId, name: "Replayed" },
        {
          token: owner.token,
          headers: { "idempotency-key": `audit-${randomUUID()}` },
        },
      );
    const headers = { "idempotency-key": `audit-${randomUUID()}` };
    const first = await api.post<{ id: string }>(
      "/api/datasets",
      { organizationId, name: "Once" },
      { token: owner.token, headers },
    );
    const again = await api.post<{ id: string }>(
      "/api/datasets",
      { organizationId, name: "Once" },
      { token: owner.token, headers },
    );
    expect(first.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    const entries = (await log({ action: "dataset.created", targetId: first.body.id })).body.data;
    expect(entries).toHaveLength(1);
    // A new key is a new change, with its own entry.
    const other = await send();
    expect((await log({ action: "dataset.created", targetId: other.body.id })).body.data).toHaveLength(1);
  });

  it("keeps entries a year unless the organization sets its retention; the change is an entry", async () => {
    const path = `/api/organizations/${organizationId}`;
    const before = await api.get<{ organization: { settings: { auditRetentionDays: number } } }>(path, {
      token: owner.token,
    });
    expect(before.body.organization.settings.auditRetentionDays).toBe(365);
    expect((await api.patch(path, { settings: { auditRetentionDays: 7 } }, { token: owner.token })).status).toBe(400);
    const set = await api.patch<{ settings: { auditRetentionDays: number } }>(
      path,
      { settings: { auditRetentionDays: 90 } },
      { token: owner.token },
    );
    expect(set.status).toBe(200);
    expect(set.body.settings.auditRetentionDays).toBe(90);
    expect(await only("organization.settings.updated")).toMatchObject({
      target: { type: "organization", id: organizationId },
      changedFields: ["settings.auditRetentionDays"],
    });
  });

  it("records SCIM provisioning as the SCIM token, in its organization", async () => {
    const made = await api.post<{ scimToken: { id: string }; token: string }>(
      `/api/organizations/${organizationId}/scim-tokens`,
      { name: "Okta" },
      { token: owner.token },
    );
    expect(made.status).toBe(201);
    const scim = scimClient(base, made.body.token);
    const created = await scim.post("/Users", oktaUser(`scim-${randomUUID().slice(0, 8)}@example.test`, "okta-1"));
    expect(created.status).toBe(201);
    const userId = (created.body as { id: string }).id;
    const deactivated = await scim.patch(`/Users/${userId}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", value: { active: false } }],
    });
    expect(deactivated.status).toBe(200);
    const entries = (await log({ actor: made.body.scimToken.id })).body.data;
    expect(entries.map((e) => e.action)).toEqual(["scim.user.updated", "scim.user.created"]);
    expect(entries[0]).toMatchObject({
      actor: { type: "scim", id: made.body.scimToken.id, organizationId },
      target: { type: "user", id: userId },
      changedFields: ["active"],
    });
    expect(JSON.stringify(entries)).not.toContain("not-stored-1!");
  });

  it("verifies the chain and finds an edited or a deleted entry", async () => {
    const verify = () =>
      api.get<{ valid: boolean; entries: number; problem: string | null; brokenAtSequence: number | null }>(
        "/api/audit-log/verify",
        { token: owner.token, query: { organizationId } },
      );
    const good = await verify();
    expect(good.status).toBe(200);
    expect(good.body).toMatchObject({ valid: true, problem: null, brokenAtSequence: null });
    expect(good.body.entries).toBeGreaterThanOrEqual(7);
    await tamper.edit(organizationId, 3, "action", "prompt.deleted");
    expect((await verify()).body).toMatchObject({ valid: false, problem: "hash_mismatch", brokenAtSequence: 3 });
    await tamper.remove(organizationId, 3);
    expect((await verify()).body).toMatchObject({ valid: false, problem: "gap", brokenAtSequence: 3 });
  });
});
