/**
 * Webhooks end to end (issue #17), in both run modes over real HTTP: a receiver server checks
 * every request's Standard Webhooks signature with its own five lines of node:crypto (not Kiln's
 * code) and answers 500 to the first run.completed, 200 after: every event arrives, signed, the
 * failed one again with the same webhook-id. In the distributed mode two dispatcher processes
 * share the work and the one holding a delivery is killed mid-request: the other delivers it.
 * SSRF: URLs and resolved addresses as http tools'.
 */
import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import type { Store } from "@kiln/kit/store";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { IN_MEMORY, openEmbeddedData } from "@kiln/launcher/data-dir";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ROOT } from "./bench/load.js";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { twoVersionSkill } from "./support/evaluation-fixture.js";

/** docs/webhooks.schema.json, with the event schemas it refers to. */
function payloadValidator() {
  const ajv = new Ajv2020({ strict: true, allErrors: true, keywords: ["x-kiln-subject"] });
  (addFormats as unknown as { default: (a: Ajv2020) => void }).default(ajv);
  const dir = join(ROOT, "docs/events");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".schema.json")))
    ajv.addSchema(JSON.parse(readFileSync(join(dir, file), "utf8")));
  return ajv.compile(JSON.parse(readFileSync(join(ROOT, "docs/webhooks.schema.json"), "utf8")));
}
const validPayload = payloadValidator();

/** The receiver's check, as docs/webhooks.md shows it. */
function signatureValid(secret: string, headers: IncomingMessage["headers"], body: string): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const signed = `${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`;
  const expected = `v1,${createHmac("sha256", key).update(signed).digest("base64")}`;
  return String(headers["webhook-signature"]).split(" ").includes(expected);
}

interface Received {
  id: string;
  type: string;
  status: number;
  valid: boolean;
  /** "" when the body matches docs/webhooks.schema.json, else the errors. */
  schemaValid: string;
  headers: IncomingMessage["headers"];
  text: string;
  body: { id: string; type: string; organizationId: string; timestamp: string; data: Record<string, unknown> };
}

function startReceiver() {
  const received: Received[] = [];
  const secrets: string[] = [];
  let failFirstOf = new Set<string>();
  const failed = new Set<string>();
  let hold: ((type: string) => boolean) | undefined;
  const held: { release: () => void; type: string }[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = "";
    req.on("data", (c) => {
      text += c;
    });
    req.on("end", () => {
      const body = JSON.parse(text) as Received["body"];
      const answer = () => {
        const status = failFirstOf.has(body.type) && !failed.has(body.type) ? 500 : 200;
        if (status === 500) failed.add(body.type);
        received.push({
          id: String(req.headers["webhook-id"]),
          type: body.type,
          status,
          valid: secrets.some((s) => signatureValid(s, req.headers, text)),
          schemaValid: validPayload(body) ? "" : JSON.stringify(validPayload.errors),
          headers: req.headers,
          text,
          body,
        });
        res.writeHead(status).end(status === 200 ? "ok" : "try again");
      };
      if (hold?.(body.type)) held.push({ release: answer, type: body.type });
      else answer();
    });
  });
  return {
    received,
    secrets,
    held,
    failFirst(types: string[]) {
      failFirstOf = new Set(types);
    },
    holdWhen(predicate: ((type: string) => boolean) | undefined) {
      hold = predicate;
    },
    async start() {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return (server.address() as AddressInfo).port;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const until = async (probe: () => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!probe() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return probe();
};

const WEBHOOK_ENV = {
  WEBHOOK_PRIVATE_HOSTS: "127.0.0.1",
  WEBHOOK_RETRY_BASE_MS: "300",
  WEBHOOK_ACK_WAIT_MS: "3000",
};

const modes = [
  {
    name: "embedded mode",
    distributed: false,
    async start() {
      const data = await openEmbeddedData(IN_MEMORY);
      const { kiln, baseUrl } = await startEmbedded({
        data,
        webhooks: { privateHosts: parseHostPatterns("127.0.0.1"), retry: { baseDelayMs: 300 }, ackWaitMs: 3_000 },
      });
      // The evaluation service's own store, read as it is stored.
      const store: Store = data.stores.evaluation;
      return { base: baseUrl, stop: () => kiln.close(), kill: undefined, store };
    },
  },
  {
    name: "distributed mode, two dispatcher processes",
    distributed: true,
    async start() {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        // The evaluation service serves the routes; two worker processes deliver.
        envOf: { evaluation: { ...WEBHOOK_ENV, WEBHOOK_DISPATCHER: "false" } },
      });
      const workers = [];
      for (let i = 0; i < 2; i++) {
        workers.push(
          await kiln.startReplica("evaluation", {
            command: "evaluation-worker",
            env: WEBHOOK_ENV,
            readyLog: "evaluation workers started",
          }),
        );
      }
      const store: Store = createMongoStore({ url: inject("mongoUrl"), database: kiln.databases.evaluation });
      const stop = async () => {
        await store.close();
        await kiln.stop();
      };
      return { base: kiln.gatewayUrl, stop, kill: workers.map((w) => w.process), store };
    },
  },
];

describe.each(modes)("webhooks in $name", (mode) => {
  let running: Awaited<ReturnType<(typeof modes)[number]["start"]>>;
  let api: TestClient;
  let token: string;
  let organizationId: string;
  let receiver: ReturnType<typeof startReceiver>;
  let port: number;
  let webhookId: string;

  beforeAll(async () => {
    receiver = startReceiver();
    port = await receiver.start();
    running = await mode.start();
    api = createTestClient(running.base);
    token = (await api.signUp()).accessToken;
    organizationId = (await api.onboard(token)).organization.id;
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
    await receiver?.close();
  });

  it("creates a webhook with a secret shown once, reads, lists, changes and refuses bad ones", async () => {
    const created = await api.post<{ id: string; secret: string; status: string }>(
      "/api/webhooks",
      {
        organizationId,
        url: `http://127.0.0.1:${port}/hooks`,
        events: [
          "run.completed",
          "prompt.version.created",
          "prompt.published",
          "label.moved",
          "skill.published",
          "evaluation.completed",
        ],
        description: "receiver",
      },
      { token },
    );
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^whk_[0-9a-f]{32}$/);
    expect(created.body.secret).toMatch(/^whsec_/);
    webhookId = created.body.id;
    receiver.secrets.push(created.body.secret);
    const read = await api.get<Record<string, unknown>>(`/api/webhooks/${webhookId}`, { token });
    expect(read.body).toMatchObject({ status: "enabled", disabledReason: null, description: "receiver" });
    expect(JSON.stringify(read.body)).not.toContain(created.body.secret);
    const list = await api.get<{ data: { id: string }[] }>("/api/webhooks", { token, query: { organizationId } });
    expect(list.body.data.map((w) => w.id)).toEqual([webhookId]);

    for (const [url, field] of [
      ["http://10.1.2.3/hook", "url"],
      ["http://169.254.169.254/latest", "url"],
      ["file:///etc/passwd", "url"],
      ["https://user:secret@example.com/", "url"],
    ] as const) {
      const r = await api.post("/api/webhooks", { organizationId, url, events: ["run.completed"] }, { token });
      expect(r.status, url).toBe(400);
      expect(r.body).toMatchObject({ error: { code: "invalid_argument", details: [{ field }] } });
    }
    const badEvent = await api.post(
      "/api/webhooks",
      { organizationId, url: "https://example.com/", events: ["run.started"] },
      { token },
    );
    expect(badEvent.status).toBe(400);
    const patched = await api.patch<{ description: string }>(
      `/api/webhooks/${webhookId}`,
      { description: "the receiver" },
      { token },
    );
    expect(patched.body.description).toBe("the receiver");
    // None of that created a second webhook.
    const again = await api.get<{ data: unknown[] }>("/api/webhooks", { token, query: { organizationId } });
    expect(again.body.data).toHaveLength(1);
  });

  it("delivers every event signed; a 500 is retried with the same webhook-id until it succeeds", async () => {
    receiver.failFirst(["run.completed"]);
    const { prompt } = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Hello {{name}}",
      variablesSchema: { type: "object", properties: { name: { type: "string" } } },
    });
    const run = await api.post<{ id: string }>(
      `/api/prompts/${prompt.id}/run`,
      { organizationId, variables: { name: "Ada" } },
      { token },
    );
    expect(run.status).toBe(201);
    const types = () => new Set(receiver.received.filter((r) => r.status === 200).map((r) => r.type));
    expect(
      await until(() =>
        ["prompt.version.created", "prompt.published", "label.moved", "run.completed"].every((t) => types().has(t)),
      ),
    ).toBe(true);
    for (const r of receiver.received) {
      expect(r.valid, `${r.type} signature`).toBe(true);
      expect(r.schemaValid, `${r.type} payload ${r.text}`).toBe("");
    }
    const runDeliveries = receiver.received.filter((r) => r.type === "run.completed");
    expect(runDeliveries.map((r) => r.status)).toEqual([500, 200]);
    expect(runDeliveries[0]?.id).toBe(runDeliveries[1]?.id);
    expect(runDeliveries[1]?.body).toMatchObject({
      type: "run.completed",
      organizationId,
      data: { runId: run.body.id, status: "succeeded", promptId: prompt.id },
    });
    const published = receiver.received.find((r) => r.type === "prompt.published");
    expect(published?.body.data).toMatchObject({ promptId: prompt.id, previousVersionId: null });

    const readDeliveries = () =>
      api.get<{
        data: { id: string; event: string; status: string; attempts: { status: string; responseCode: number }[] }[];
      }>(`/api/webhooks/${webhookId}/deliveries`, { token });
    let deliveries = await readDeliveries();
    const runDeliveryOf = () => deliveries.body.data.find((d) => d.event === "run.completed");
    // The dispatcher records the 200 after the receiver answered it: the record follows shortly after.
    for (const deadline = Date.now() + 20_000; runDeliveryOf()?.status === "pending" && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50));
      deliveries = await readDeliveries();
    }
    const runDelivery = runDeliveryOf();
    expect(runDelivery).toMatchObject({ status: "succeeded", id: runDeliveries[0]?.id });
    expect(runDelivery?.attempts.map((a) => [a.status, a.responseCode])).toEqual([
      ["failed", 500],
      ["succeeded", 200],
    ]);
    // Each event once per webhook, though the bus may deliver it more than once.
    expect(new Set(deliveries.body.data.map((d) => d.id)).size).toBe(deliveries.body.data.length);
  });

  it("delivers evaluation.completed when an evaluation run ends", async () => {
    const skill = await twoVersionSkill(
      api,
      { token, organizationId },
      { name: "Evaluated", model: "local/echo", published: "Hi {{name}}", draft: "Hello {{name}}" },
    );
    await api.createEvaluationCases(token, organizationId, skill.skillId, [
      { input: { name: "Ada" }, assertions: [{ type: "contains", value: "Hello" }] },
    ]);
    const started = await api.startEvaluation(token, organizationId, skill.skillId);
    const evaluated = () =>
      receiver.received.find((r) => r.type === "evaluation.completed" && r.body.data.evaluationRunId === started.id);
    expect(await until(() => evaluated() !== undefined)).toBe(true);
    expect(evaluated()?.body.data).toMatchObject({ skillId: skill.skillId, status: "completed", caseCount: 1 });
    expect(evaluated()?.schemaValid).toBe("");
    expect(evaluated()?.valid).toBe(true);
  });

  it("tests, redelivers with the same id, and rotates the secret (both sign for a day)", async () => {
    const test = await api.post<{ status: string; event: string; responseCode: number }>(
      `/api/webhooks/${webhookId}/test`,
      undefined,
      { token },
    );
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ status: "succeeded", event: "webhook.test", responseCode: 200 });
    const rotated = await api.post<{ secret: string }>(`/api/webhooks/${webhookId}/rotate-secret`, undefined, {
      token,
    });
    expect(rotated.status).toBe(200);
    const [oldSecret] = receiver.secrets;
    receiver.secrets.splice(0, receiver.secrets.length, rotated.body.secret);
    const before = receiver.received.length;
    const deliveries = await api.get<{ data: { id: string; event: string }[] }>(
      `/api/webhooks/${webhookId}/deliveries`,
      { token },
    );
    const target = deliveries.body.data.find((d) => d.event === "prompt.published");
    const redelivered = await api.post<{ status: string }>(
      `/api/webhooks/${webhookId}/deliveries/${target?.id}/redeliver`,
      undefined,
      { token },
    );
    expect(redelivered.status).toBe(202);
    expect(redelivered.body.status).toBe("pending");
    expect(await until(() => receiver.received.length > before)).toBe(true);
    const again = receiver.received.at(-1);
    expect(again?.id).toBe(target?.id);
    expect(again?.valid).toBe(true);
    // The old secret still signs it too, beside the new one, for a day.
    expect(String(again?.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(signatureValid(oldSecret ?? "", again?.headers ?? {}, again?.text ?? "")).toBe(true);
  });

  it("stores the secret sealed, signs with it, and never answers it again on a replayed create", async () => {
    const body = { organizationId, url: `http://127.0.0.1:${port}/sealed`, events: ["label.moved"] };
    const headers = { "idempotency-key": `sealed-${mode.distributed}` };
    const created = await api.post<{ id: string; secret: string }>("/api/webhooks", body, { token, headers });
    expect(created.status).toBe(201);
    const { id, secret } = created.body;
    expect(secret).toMatch(/^whsec_/);
    const key = secret.slice("whsec_".length);
    // At rest: the stored document holds the secret sealed, neither it nor its key bytes in clear.
    const stored = await running.store.collection<{ _id: string; secret: string }>("webhooks").findOne({ _id: id });
    expect(stored?.secret).toMatch(/^enc:v1:/);
    expect(JSON.stringify(stored)).not.toContain(key);
    // The stored answer of the create, which a replay reads, does not hold it either.
    const answers = await running.store.collection<{ _id: string; response: string }>("idempotency_responses").find({});
    const decoded = answers.map((a) => Buffer.from(a.response, "base64").toString("latin1"));
    expect(decoded.some((d) => d.includes(id))).toBe(true);
    expect(decoded.filter((d) => d.includes(key))).toEqual([]);
    // It still signs: the receiver checks the delivery with the secret the create answered.
    receiver.secrets.push(secret);
    const before = receiver.received.length;
    const test = await api.post<{ status: string }>(`/api/webhooks/${id}/test`, undefined, { token });
    expect(test.body.status).toBe("succeeded");
    expect(receiver.received.slice(before).map((r) => [r.type, r.valid])).toEqual([["webhook.test", true]]);

    const replay = async () => {
      const r = await api.post<Record<string, unknown>>("/api/webhooks", body, { token, headers });
      expect(r.status).toBe(201);
      expect(r.headers["idempotent-replayed"]).toBe("true");
      expect(r.body.id).toBe(id);
      expect(r.body).not.toHaveProperty("secret");
      return JSON.stringify(r.body);
    };
    expect(await replay()).not.toContain(key);
    const rotated = await api.post<{ secret: string }>(`/api/webhooks/${id}/rotate-secret`, undefined, { token });
    expect(rotated.status).toBe(200);
    const afterRotation = await replay();
    expect(afterRotation).not.toContain(key);
    expect(afterRotation).not.toContain(rotated.body.secret.slice("whsec_".length));
    expect((await api.delete(`/api/webhooks/${id}`, { token })).status).toBe(200);
    expect(await replay()).not.toContain(key);
    receiver.secrets.splice(receiver.secrets.indexOf(secret), 1);
  });

  it("refuses, at delivery, a name that resolves to a private address", async () => {
    const created = await api.post<{ id: string }>(
      "/api/webhooks",
      { organizationId, url: `http://localhost:${port}/hooks`, events: ["label.moved"] },
      { token },
    );
    expect(created.status).toBe(201);
    const test = await api.post<{ status: string; attempts: { error: string }[] }>(
      `/api/webhooks/${created.body.id}/test`,
      undefined,
      { token },
    );
    expect(test.body.status).toBe("failed");
    expect(test.body.attempts[0]?.error).toContain("range");
    await api.delete(`/api/webhooks/${created.body.id}`, { token });
  });

  // Two dispatcher processes exist in the distributed mode only.
  if (mode.distributed)
    it("delivers through the other dispatcher when the one holding a delivery is killed mid-request", async () => {
      receiver.holdWhen((type) => type === "skill.published");
      const skill = await api.createSkill(token, organizationId);
      const { prompt } = await api.createPublishedPrompt(token, organizationId, { systemPrompt: "Hi" });
      await api.replaceSkillPrompts(token, skill.draftVersionId ?? "", [{ promptId: prompt.id }]);
      await api.publishSkill(token, skill.id);
      const mine = (r: { body: Received["body"] }) => r.body.data.skillId === skill.id;
      expect(await until(() => receiver.held.length > 0)).toBe(true);
      // The process whose socket is connected to the receiver holds the delivery.
      const sockets = execFileSync("ss", ["-Htnp", "dst", `127.0.0.1:${port}`], { encoding: "utf8" });
      const pids = [...sockets.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
      const victim = running.kill?.find((p) => pids.includes(p.pid ?? -1));
      expect(victim, sockets).toBeDefined();
      victim?.kill("SIGKILL");
      // The other dispatcher takes it after the ack wait; the receiver answers it at once.
      receiver.holdWhen(undefined);
      expect(
        await until(
          () => receiver.received.some((r) => r.type === "skill.published" && mine(r) && r.status === 200),
          30_000,
        ),
      ).toBe(true);
      for (const h of receiver.held.splice(0)) h.release();
      const delivered = receiver.received.filter((r) => r.type === "skill.published" && mine(r));
      expect(new Set(delivered.map((r) => r.id)).size).toBe(1);
      expect(delivered.every((r) => r.valid)).toBe(true);
    }, 60_000);
});
