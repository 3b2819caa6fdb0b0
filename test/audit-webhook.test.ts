/**
 * An organization streams its audit log to its own webhook (issue #51, docs/governance.md
 * "Streaming to a webhook"), in both run modes over real HTTP: owners set the URL (the webhooks'
 * address policy: a bad one is 400 and changes nothing), get the signing secret once, and every
 * entry from the log's beginning arrives signed (Standard Webhooks, checked here as the docs tell a
 * receiver to); a new URL keeps the secret and the place; a rotation signs with the new secret only;
 * a refusing receiver shows in the delivery state and loses nothing; after removal nothing more
 * arrives. Members get 403, other organizations 404, and the secret is in no answer but the one
 * that made it, in no entry, and sealed in the store.
 */
import { createHmac } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import type { Store } from "@kiln/kit/store";
import { openEmbeddedData } from "@kiln/launcher/data-dir";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type AuditReceiver, type ReceivedRequest, startAuditReceiver } from "./support/audit-receiver.js";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { eventually } from "./support/identity-flow.js";

interface Running {
  base: string;
  /** The stream's document as identity stored it. */
  stored(organizationId: string): Promise<{ url: string; secret: string } | null>;
  stop(): Promise<void>;
}

const MODES: { name: string; start(): Promise<Running> }[] = [
  {
    name: "embedded mode",
    async start() {
      const data = await openEmbeddedData(":memory:");
      const { kiln, baseUrl } = await startEmbedded({
        data,
        webhooks: { privateHosts: parseHostPatterns("127.0.0.1") },
      });
      const store: Store = data.stores.identity;
      const streams = store.collection<{ _id: string; url: string; secret: string }>("audit_streams");
      return { base: baseUrl, stored: (org) => streams.findOne({ _id: org }), stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start() {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        envOf: { identity: { WEBHOOK_PRIVATE_HOSTS: "127.0.0.1" } },
      });
      const driver = new MongoClient(inject("mongoUrl"));
      const streams = driver
        .db(kiln.databases.identity)
        .collection<{ _id: string; url: string; secret: string }>("audit_streams");
      return {
        base: kiln.gatewayUrl,
        stored: (org) => streams.findOne({ _id: org }),
        stop: async () => {
          await driver.close();
          await kiln.stop();
        },
      };
    },
  },
];

/** A receiver's check, as docs/governance.md writes it: the HMAC of id.timestamp.body under the secret's key. */
function signedBy(secret: string, r: ReceivedRequest): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const signed = `${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.text}`;
  const expected = `v1,${createHmac("sha256", key).update(signed).digest("base64")}`;
  const fresh = Math.abs(Date.now() / 1000 - Number(r.headers["webhook-timestamp"])) < 300;
  return fresh && String(r.headers["webhook-signature"]).split(" ").includes(expected);
}

interface Entry {
  id: string;
  sequence: number;
  action: string;
  changedFields: string[];
}

interface Stream {
  url: string;
  secret?: string;
  delivery: { acknowledgedSequence: number; failures: number; lastError: string | null; acknowledgedAt: string | null };
}

describe.each(MODES)("the audit log streamed to an organization's webhook in $name", (mode) => {
  let running: Running;
  let receiver: AuditReceiver;
  let api: TestClient;
  let owner: string;
  let member: string;
  let outsider: string;
  let organizationId: string;
  const secrets: string[] = [];
  const path = () => `/api/organizations/${organizationId}/audit-stream`;

  /** The organization's whole log, oldest first. */
  const logOf = async (): Promise<Entry[]> => {
    const r = await api.get<{ data: Entry[] }>("/api/audit-log", {
      token: owner,
      query: { organizationId, limit: 200 },
    });
    expect(r.status).toBe(200);
    return [...r.body.data].reverse();
  };
  const at = (p: string) => receiver.received.filter((r) => r.path === p);
  const sequencesAt = (p: string) => at(p).flatMap((r) => (r.body.entries as Entry[]).map((e) => e.sequence));
  /** Waits until `p` received the newest entry of the log; answers the log. */
  const arrived = async (p: string) => {
    const log = await logOf();
    const newest = log[log.length - 1]?.sequence ?? 0;
    await eventually(async () => sequencesAt(p).includes(newest), 30_000);
    return log;
  };
  const change = async (name: string) => {
    const r = await api.post("/api/prompts", { organizationId, name }, { token: owner });
    expect(r.status).toBe(201);
  };

  beforeAll(async () => {
    receiver = await startAuditReceiver();
    running = await mode.start();
    api = createTestClient(running.base);
    const signedUp = await api.signUp();
    owner = signedUp.accessToken;
    organizationId = (await api.onboard(owner)).organization.id;
    const other = await api.signUp();
    const added = await api.post(
      `/api/organizations/${organizationId}/members`,
      { email: other.email, role: "member" },
      { token: owner },
    );
    expect(added.status).toBe(201);
    member = other.accessToken;
    outsider = (await api.signUp()).accessToken;
    await api.onboard(outsider);
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
    await receiver?.close();
  });

  it("refuses a URL the webhooks' address policy refuses (400 on url) and changes nothing", async () => {
    for (const url of ["ftp://example.com/x", "http://10.1.2.3/hook", "https://user:pw@example.com/", "not a url"]) {
      const r = await api.put<{ error: { code: string; details: { field: string }[] } }>(
        path(),
        { url },
        { token: owner },
      );
      expect(r.status, url).toBe(400);
      expect(r.body.error.code).toBe("invalid_argument");
      expect(r.body.error.details.map((d) => d.field)).toEqual(["url"]);
    }
    expect((await api.put(path(), { url: receiver.url("/a"), extra: 1 }, { token: owner })).status).toBe(400);
    const none = await api.get<{ error: { code: string } }>(path(), { token: owner });
    expect(none).toMatchObject({ status: 404, body: { error: { code: "not_found" } } });
  });

  it("refuses members (403) and other organizations (404) on every route", async () => {
    const calls = (token: string) => [
      api.put(path(), { url: receiver.url("/x") }, { token }),
      api.get(path(), { token }),
      api.delete(path(), { token }),
      api.post(`${path()}/rotate-secret`, undefined, { token }),
    ];
    expect((await Promise.all(calls(member))).map((r) => r.status)).toEqual([403, 403, 403, 403]);
    expect((await Promise.all(calls(outsider))).map((r) => r.status)).toEqual([404, 404, 404, 404]);
    // The organization's settings take a signed-in owner or admin: an API key, whatever its scopes, is refused.
    const key = await api.createApiKey(owner, organizationId, ["audit:read", "webhooks:write"]);
    expect((await Promise.all(calls(key.key))).map((r) => r.status)).toEqual([403, 403, 403, 403]);
    expect((await api.get(path(), { token: owner })).status).toBe(404);
  });

  it("answers the secret once and streams every entry from the log's beginning, signed", async () => {
    const set = await api.put<Stream>(path(), { url: receiver.url("/a") }, { token: owner });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ url: receiver.url("/a"), delivery: { acknowledgedSequence: 0 } });
    const secret = set.body.secret ?? "";
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    secrets.push(secret);
    const read = await api.get<Stream>(path(), { token: owner });
    expect(read.status).toBe(200);
    expect(read.body.secret).toBeUndefined();
    await change("Streamed");
    const log = await arrived("/a");
    expect(sequencesAt("/a")).toEqual(log.map((e) => e.sequence));
    expect(log.map((e) => e.sequence)[0]).toBe(1);
    const first = at("/a")[0];
    expect(first?.body.organizationId).toBe(organizationId);
    expect(first?.headers["webhook-id"]).toMatch(new RegExp(`^audit_${organizationId}_1_\\d+$`));
    expect(at("/a").every((r) => signedBy(secret, r))).toBe(true);
    expect(log.find((e) => e.action === "settings.audit_stream.updated")?.changedFields).toEqual(["url"]);
    await eventually(async () => {
      const d = (await api.get<Stream>(path(), { token: owner })).body.delivery;
      return d.acknowledgedSequence === log.length && d.acknowledgedAt !== null && d.failures === 0;
    }, 10_000);
  });

  it("moves to a new URL with the same secret, from where it was", async () => {
    const acknowledged = (await api.get<Stream>(path(), { token: owner })).body.delivery.acknowledgedSequence;
    const moved = await api.put<Stream>(path(), { url: receiver.url("/b") }, { token: owner });
    expect(moved.status).toBe(200);
    expect(moved.body.url).toBe(receiver.url("/b"));
    expect("secret" in moved.body).toBe(false);
    await change("After the move");
    await arrived("/b");
    expect(Math.min(...sequencesAt("/b"))).toBe(acknowledged + 1);
    expect(at("/b").every((r) => signedBy(secrets[0] ?? "", r))).toBe(true);
  });

  it("signs with the new secret only once it is rotated", async () => {
    const rotated = await api.post<Stream>(`${path()}/rotate-secret`, undefined, { token: owner });
    expect(rotated.status).toBe(200);
    const secret = rotated.body.secret ?? "";
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(secrets[0]);
    secrets.push(secret);
    const before = at("/b").length;
    await change("After the rotation");
    await arrived("/b");
    const after = at("/b").slice(before);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((r) => signedBy(secret, r) && !signedBy(secrets[0] ?? "", r))).toBe(true);
    expect((await logOf()).some((e) => e.action === "settings.audit_stream.secret.rotated")).toBe(true);
  });

  it("tells a refusing receiver's failure and sends the page again once it answers", async () => {
    receiver.answer(503);
    await change("During the outage");
    await eventually(async () => {
      const d = (await api.get<Stream>(path(), { token: owner })).body.delivery;
      return d.failures > 0 && d.lastError === "HTTP 503";
    }, 30_000);
    receiver.answer(200);
    const log = await arrived("/b");
    expect(new Set([...sequencesAt("/a"), ...sequencesAt("/b")])).toEqual(new Set(log.map((e) => e.sequence)));
  }, 60_000);

  it("keeps the secret out of every answer and entry, and sealed in the store", async () => {
    const stored = await running.stored(organizationId);
    expect(stored?.secret).toMatch(/^enc:v1:/);
    const answers = [
      await api.get(path(), { token: owner }),
      await api.get("/api/audit-log", { token: owner, query: { organizationId, limit: 200 } }),
      await api.get("/api/audit-log", { token: owner, query: { organizationId, format: "jsonl", limit: 200 } }),
      await api.get(`/api/organizations/${organizationId}`, { token: owner }),
      await api.get("/api/organizations", { token: owner }),
    ];
    const texts = [...answers.map((a) => a.text), ...receiver.received.map((r) => r.text), stored?.secret ?? ""];
    for (const secret of secrets) for (const text of texts) expect(text).not.toContain(secret.slice("whsec_".length));
  });

  it("stops streaming once removed", async () => {
    const removed = await api.delete<Stream>(path(), { token: owner });
    expect(removed.status).toBe(200);
    expect(removed.body.url).toBe(receiver.url("/b"));
    expect("secret" in removed.body).toBe(false);
    expect((await api.get(path(), { token: owner })).status).toBe(404);
    const count = receiver.received.length;
    await change("After the removal");
    // Three passes of the stream (one a second) and the kick after the record.
    await sleep(3_500);
    expect(receiver.received.length).toBe(count);
    expect((await logOf()).at(-1)?.action).toBe("prompt.created");
    expect((await logOf()).some((e) => e.action === "settings.audit_stream.deleted")).toBe(true);
  });

  it("starts a stream set again from the log's beginning, with a new secret", async () => {
    const set = await api.put<Stream>(path(), { url: receiver.url("/c") }, { token: owner });
    expect(set.status).toBe(200);
    expect(set.body.secret).toMatch(/^whsec_/);
    expect(secrets).not.toContain(set.body.secret);
    const log = await arrived("/c");
    expect(sequencesAt("/c")).toEqual(log.map((e) => e.sequence));
    expect(at("/c").every((r) => signedBy(set.body.secret ?? "", r))).toBe(true);
  });
});
