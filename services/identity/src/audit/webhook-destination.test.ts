import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@kiln/kit/logger";
import { parseHostPattern } from "@kiln/kit/outbound/host-patterns";
import { createSecretBox, newSecretKey } from "@kiln/kit/secret-box";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { verify } from "@kiln/webhooks-lib/signing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityCollections } from "../store/identity-store.js";
import { createAuditExporter } from "./audit-exporter.js";
import { createAuditLog } from "./audit-log.js";
import { auditEntries } from "./audit-store.js";
import { auditStreams, sealContextOf } from "./audit-stream-store.js";
import { exportCursors } from "./export-cursors.js";
import { webhookDestination } from "./webhook-destination.js";

const PLATFORM = { type: "service" as const, id: "gateway" };
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const secrets = createSecretBox({ current: newSecretKey(), previous: [] });
const logger = createLogger({ name: "test", level: "silent" });

const received: { path: string; headers: IncomingHttpHeaders; text: string }[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    received.push({ path: req.url ?? "", headers: req.headers, text: Buffer.concat(chunks).toString("utf8") });
    res.writeHead(204).end();
  });
});
let port = 0;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const stream = (organizationId: string, url: string, secret: string) => ({
  _id: organizationId,
  organizationId,
  url,
  secret,
  createdAt: new Date(),
  updatedAt: new Date(),
  updatedByUserId: "usr_1",
});

async function setup(privateHosts: string[]) {
  const store = createMemoryStore();
  const c = identityCollections(store);
  const audit = createAuditLog(auditEntries(store), c);
  const exporter = createAuditExporter({
    entries: auditEntries(store),
    cursors: exportCursors(store),
    destinations: [
      webhookDestination(auditStreams(store), {
        privateHosts: privateHosts.map(parseHostPattern),
        resolve: async () => [{ address: "127.0.0.1", family: 4 }],
        secrets,
      }),
    ],
    logger,
    intervalMs: 3_600_000,
  });
  const record = (org: string, n: number) =>
    audit.record(PLATFORM, [
      {
        id: `aud_${org}_${n}`,
        organizationId: org,
        occurredAt: new Date(),
        actorType: "user",
        actorId: "usr_1",
        action: "prompt.created",
        targetType: "prompt",
        targetId: `prm_${n}`,
        requestId: `req_${n}`,
        sourceAddress: "127.0.0.1",
        changedFields: ["name"],
        outcome: "success",
      },
    ]);
  return { store, streams: auditStreams(store), exporter, record };
}

describe("the audit webhook", () => {
  it("posts each organization's entries, signed, to its own URL only", async () => {
    received.length = 0;
    const { streams, exporter, record } = await setup(["127.0.0.1"]);
    await streams.insertOne(
      stream("org_a", `http://127.0.0.1:${port}/a`, secrets.seal(SECRET, sealContextOf("org_a"))),
    );
    for (let n = 1; n <= 3; n++) await record("org_a", n);
    for (let n = 1; n <= 2; n++) await record("org_b", n);
    await exporter.runOnce();
    expect(received.map((r) => r.path)).toEqual(["/a"]);
    const [request] = received;
    if (!request) throw new Error("nothing received");
    const body = JSON.parse(request.text);
    expect(body.organizationId).toBe("org_a");
    expect(body.entries.map((e: { id: string; sequence: number }) => [e.id, e.sequence])).toEqual([
      ["aud_org_a_1", 1],
      ["aud_org_a_2", 2],
      ["aud_org_a_3", 3],
    ]);
    expect(body.entries[0]).toMatchObject({ actor: { type: "user", id: "usr_1" }, target: { type: "prompt" } });
    const signed = {
      id: String(request.headers["webhook-id"]),
      timestamp: String(request.headers["webhook-timestamp"]),
      signature: String(request.headers["webhook-signature"]),
    };
    expect(verify(SECRET, signed, request.text)).toBe(true);
    expect(verify("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", signed, request.text)).toBe(false);
    await exporter.stop();
  });

  it("refuses a private address the policy does not allow, and keeps the entries for later", async () => {
    received.length = 0;
    const { streams, store, exporter, record } = await setup([]);
    await streams.insertOne(
      stream("org_a", `http://127.0.0.1:${port}/a`, secrets.seal(SECRET, sealContextOf("org_a"))),
    );
    await record("org_a", 1);
    await exporter.runOnce();
    expect(received).toHaveLength(0);
    const cursor = await exportCursors(store).findOne({ _id: "webhook:org_a" });
    expect(cursor).toMatchObject({ sequence: 0, failures: 1, lastError: expect.stringContaining("127.0.0.1") });
    expect(cursor?.lastErrorAt).toBeInstanceOf(Date);
    await exporter.stop();
  });

  it("does not open a secret sealed for another organization, and sends nothing unsigned", async () => {
    received.length = 0;
    const { streams, store, exporter, record } = await setup(["127.0.0.1"]);
    const copied = secrets.seal(SECRET, sealContextOf("org_b"));
    await streams.insertOne(stream("org_a", `http://127.0.0.1:${port}/a`, copied));
    await record("org_a", 1);
    await exporter.runOnce();
    expect(received).toHaveLength(0);
    const cursor = await exportCursors(store).findOne({ _id: "webhook:org_a" });
    expect(cursor).toMatchObject({ sequence: 0, failures: 1, lastError: expect.stringMatching(/^could not open/) });
    await exporter.stop();
  });
});
