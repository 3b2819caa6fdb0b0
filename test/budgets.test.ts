/**
 * Budgets (docs/budgets.md, issue #49) over real HTTP in both run modes, with a priced model behind
 * an OpenAI stub: CRUD and its 400s and cross-organization 404s; a blocking budget under 64
 * concurrent callers refuses with 429 naming it, before any provider call, the overspend within the
 * documented bound (the runs in flight); alert thresholds arrive once each as real signed webhook
 * deliveries to a local receiver, checked as docs/webhooks.md says; a key's budget refuses that
 * key only.
 */
import { createHmac } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { loadProvidersConfig } from "@kiln/execution/config";
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ROOT } from "./bench/load.js";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

// biome-ignore lint/suspicious/noExplicitAny: bodies are asserted field by field.
type Loose = any;

const USAGE = { prompt_tokens: 1200, completion_tokens: 150 };
const providerEnv = (stub: OpenAIStub) => ({
  OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
    { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "priced", inputPerMTokUsd: 3, outputPerMTokUsd: 15 }] },
  ]),
  PROVIDER_MAX_RETRIES: "0",
});
/** What one run of the stub's answer costs: 1200 input tokens at 3 USD/MTok, 150 output at 15. */
const RUN_COST = (1200 * 3 + 150 * 15) / 1e6;
const SCOPES = ["prompts:read", "runs:write", "runs:read"];
const WEBHOOK_ENV = { WEBHOOK_PRIVATE_HOSTS: "127.0.0.1", WEBHOOK_RETRY_BASE_MS: "300" };

const modes = [
  {
    name: "embedded mode",
    async start(stub: OpenAIStub) {
      const { kiln, baseUrl } = await startEmbedded({
        providers: loadProvidersConfig(providerEnv(stub)),
        webhooks: { privateHosts: parseHostPatterns("127.0.0.1"), retry: { baseDelayMs: 300 } },
      });
      return { base: baseUrl, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start(stub: OpenAIStub) {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        envOf: { execution: providerEnv(stub), evaluation: WEBHOOK_ENV },
      });
      return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];

/** docs/webhooks.schema.json with the event schemas it refers to. */
function payloadValidator() {
  const ajv = new Ajv2020({ strict: true, allErrors: true, keywords: ["x-kiln-subject"] });
  (addFormats as unknown as { default: (a: Ajv2020) => void }).default(ajv);
  const dir = join(ROOT, "docs/events");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".schema.json")))
    ajv.addSchema(JSON.parse(readFileSync(join(dir, file), "utf8")));
  return ajv.compile(JSON.parse(readFileSync(join(ROOT, "docs/webhooks.schema.json"), "utf8")));
}

/** The receiver's own check, as docs/webhooks.md shows it. */
function signatureValid(secret: string, headers: IncomingMessage["headers"], body: string): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const signed = `${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`;
  const expected = `v1,${createHmac("sha256", key).update(signed).digest("base64")}`;
  const fresh = Math.abs(Date.now() / 1000 - Number(headers["webhook-timestamp"])) < 300;
  return fresh && String(headers["webhook-signature"]).split(" ").includes(expected);
}

async function startReceiver() {
  const received: { headers: IncomingMessage["headers"]; text: string; body: Loose }[] = [];
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (c) => {
      text += c;
    });
    req.on("end", () => {
      received.push({ headers: req.headers, text, body: JSON.parse(text) });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secondsToNextDay = (now = new Date()) => {
  return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
};

describe.each(modes)("budgets ($name)", (mode) => {
  let stub: OpenAIStub;
  let running: { base: string; stop: () => Promise<void> };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const validPayload = payloadValidator();

  beforeAll(async () => {
    stub = await startOpenAIStub({ latencyMs: 20, respond: () => stubReply.text("ok", { usage: USAGE }) });
    receiver = await startReceiver();
    running = await mode.start(stub);
  }, 180_000);

  afterAll(async () => {
    await running?.stop();
    await stub?.close();
    await receiver?.close();
  });

  /** An organization with a published prompt of the priced model. */
  async function organization() {
    const flow = await runIdentityFlow(running.base, SCOPES);
    const p = await createTestClient(running.base).createPublishedPrompt(flow.token, flow.organizationId, {
      model: "stub/priced",
      systemPrompt: "Answer.",
    });
    return { flow, promptId: p.prompt.id as string };
  }

  const api = (flow: FlowResult, method: string, path: string, body?: unknown) =>
    call(running.base, method, path, { token: flow.token, ...(body !== undefined ? { body } : {}) });
  const run = (org: { flow: FlowResult; promptId: string }, auth: { apiKey: string } | { token: string }) =>
    call(running.base, "POST", `/api/prompts/${org.promptId}/run`, {
      ...auth,
      body: { organizationId: org.flow.organizationId, variables: {} },
    });

  it("creates, reads, lists, changes and deletes budgets; refuses bad ones with 400 and others' with 404", async () => {
    const { flow, promptId } = await organization();
    const other = await runIdentityFlow(running.base, SCOPES);
    const created = await api(flow, "POST", "/api/budgets", {
      organizationId: flow.organizationId,
      name: "prompt per day",
      scope: { type: "prompt", promptId },
      limitUsd: 5,
      period: "day",
      action: "block",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const b = created.body as Loose;
    expect(b.id).toMatch(/^bdg_[0-9a-f]{32}$/);
    const today = new Date().toISOString().slice(0, 10);
    expect(b).toMatchObject({
      organizationId: flow.organizationId,
      name: "prompt per day",
      scope: { type: "prompt", promptId },
      limitUsd: 5,
      period: "day",
      action: "block",
      alertAt: [0.5, 0.8, 1],
      spentUsd: 0,
      periodStart: `${today}T00:00:00.000Z`,
    });
    expect(Date.parse(b.periodEnd) - Date.parse(b.periodStart)).toBe(86_400_000);
    const month = await api(flow, "POST", "/api/budgets", {
      organizationId: flow.organizationId,
      name: "whole org",
      scope: { type: "organization" },
      limitUsd: 100,
      period: "month",
      action: "alert",
      alertAt: [1, 0.25],
    });
    expect(month.status).toBe(201);
    expect(month.body).toMatchObject({ alertAt: [0.25, 1], periodStart: `${today.slice(0, 7)}-01T00:00:00.000Z` });

    const list = await api(flow, "GET", `/api/budgets?organizationId=${flow.organizationId}&limit=1`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: Loose) => x.id)).toEqual([month.body.id]);
    const next = await api(
      flow,
      "GET",
      `/api/budgets?organizationId=${flow.organizationId}&limit=1&cursor=${list.body.nextCursor}`,
    );
    expect(next.body.data.map((x: Loose) => x.id)).toEqual([b.id]);
    expect((await api(flow, "GET", `/api/budgets/${b.id}`)).body).toMatchObject({ id: b.id, spentUsd: 0 });
    const patched = await api(flow, "PATCH", `/api/budgets/${b.id}`, { limitUsd: 7.5, name: "renamed" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ limitUsd: 7.5, name: "renamed", scope: { type: "prompt", promptId } });

    for (const [body, field] of [
      [{ scope: { type: "api_key" } }, "scope.apiKeyId"],
      [{ scope: { type: "connection", connectionId: "nope" } }, "scope.connectionId"],
      [{ period: "week" }, "period"],
      [{ limitUsd: -1 }, "limitUsd"],
      [{ action: "throttle" }, "action"],
      [{ alertAt: [1.5] }, "alertAt"],
      [{ extra: true }, "extra"],
    ] as [Record<string, unknown>, string][]) {
      const res = await api(flow, "POST", "/api/budgets", {
        organizationId: flow.organizationId,
        name: "x",
        scope: { type: "organization" },
        limitUsd: 1,
        period: "day",
        action: "block",
        ...body,
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("invalid_argument");
      expect(JSON.stringify(res.body.error.details), JSON.stringify(body)).toContain(field);
    }
    expect((await api(flow, "PATCH", `/api/budgets/${b.id}`, { limitUsd: 0 })).status).toBe(400);

    // Another organization's budget is not there for it, whatever it tries.
    for (const [method, body] of [["GET"], ["PATCH", { limitUsd: 1 }], ["DELETE"]] as const) {
      const res = await api(other, method, `/api/budgets/${b.id}`, body);
      expect(res.status, method).toBe(404);
    }
    expect((await api(other, "GET", `/api/budgets?organizationId=${flow.organizationId}`)).status).toBe(404);
    expect((await api(other, "GET", `/api/budgets?organizationId=${other.organizationId}`)).body.data).toEqual([]);

    const deleted = await api(flow, "DELETE", `/api/budgets/${b.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.id).toBe(b.id);
    expect((await api(flow, "GET", `/api/budgets/${b.id}`)).status).toBe(404);
  }, 120_000);

  it("holds a blocking budget under 64 concurrent callers: 429 naming it, before any provider call, overspend within the runs in flight", async () => {
    const org = await organization();
    const limitUsd = 100 * RUN_COST;
    const created = await api(org.flow, "POST", "/api/budgets", {
      organizationId: org.flow.organizationId,
      name: "daily cap",
      scope: { type: "organization" },
      limitUsd,
      period: "day",
      action: "block",
      alertAt: [],
    });
    expect(created.status).toBe(201);
    const before = stub.requests.length;
    const startedAt = new Date();
    const CALLERS = 64;
    let stored = 0;
    const refusals: Loose[] = [];
    // Each caller runs until it is refused: the budget is crossed while up to 64 runs are in flight.
    await Promise.all(
      Array.from({ length: CALLERS }, async (_, i) => {
        for (let attempt = 0; attempt < 20; attempt++) {
          const res = await run(org, i % 2 === 0 ? { apiKey: org.flow.apiKey } : { token: org.flow.token });
          if (res.status === 429) return refusals.push(res);
          expect(res.status, JSON.stringify(res.body)).toBe(201);
          stored++;
        }
      }),
    );
    expect(refusals).toHaveLength(CALLERS);
    const refused = refusals[0];
    expect(refused.body.error.code).toBe("resource_exhausted");
    expect(refused.body.error.details).toContainEqual({ field: "budgetId", issue: created.body.id });
    expect(refused.body.error.message).toContain("daily cap");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(secondsToNextDay() - 60);
    // At most the seconds from when the callers started (the first refusal may be seconds before this line).
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(secondsToNextDay(startedAt)) + 1);
    // A refused run called no provider: one provider request per stored run.
    expect(stub.requests.length - before).toBe(stored);
    // The line was reached, and crossed by at most the runs in flight (docs/budgets.md).
    const spent = stored * RUN_COST;
    expect(spent).toBeGreaterThanOrEqual(limitUsd - 1e-9);
    expect(spent).toBeLessThanOrEqual(limitUsd + CALLERS * RUN_COST + 1e-9);
    // Once the ledger has them the budget shows the spend of the stored runs, and still refuses.
    const deadline = Date.now() + 20_000;
    let view: Loose;
    do {
      await sleep(200);
      view = (await api(org.flow, "GET", `/api/budgets/${created.body.id}`)).body;
    } while (Math.abs(view.spentUsd - spent) > 1e-9 && Date.now() < deadline);
    expect(view.spentUsd).toBeCloseTo(spent, 9);
    await sleep(1_200);
    expect((await run(org, { apiKey: org.flow.apiKey })).status).toBe(429);
    // Raised: runs go through again at once (a change through this API applies to the next run).
    await api(org.flow, "PATCH", `/api/budgets/${created.body.id}`, { limitUsd: spent + 10 * RUN_COST });
    const again = await run(org, { apiKey: org.flow.apiKey });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
  }, 120_000);

  it("sends each threshold's budget.threshold_reached once, signed, and does not block an alert budget", async () => {
    const org = await organization();
    const hook = await api(org.flow, "POST", "/api/webhooks", {
      organizationId: org.flow.organizationId,
      url: receiver.url,
      events: ["budget.threshold_reached"],
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const secret: string = hook.body.secret;
    const budget = await api(org.flow, "POST", "/api/budgets", {
      organizationId: org.flow.organizationId,
      name: "watch the key",
      scope: { type: "api_key", apiKeyId: org.flow.apiKeyId },
      limitUsd: 4 * RUN_COST,
      period: "month",
      action: "alert",
      alertAt: [0.5, 1],
    });
    expect(budget.status).toBe(201);
    // Twelve runs, three times the limit: an alert budget refuses none of them.
    for (let i = 0; i < 12; i++) expect((await run(org, { apiKey: org.flow.apiKey })).status).toBe(201);
    const mine = () => receiver.received.filter((r) => r.body.organizationId === org.flow.organizationId);
    const deadline = Date.now() + 20_000;
    while (mine().length < 2 && Date.now() < deadline) await sleep(100);
    // The ledger's flushes and re-reads since announce nothing again.
    await sleep(3_000);
    const got = mine();
    expect(got.map((r) => r.body.data.threshold).sort()).toEqual([0.5, 1]);
    for (const r of got) {
      expect(signatureValid(secret, r.headers, r.text)).toBe(true);
      expect(validPayload(r.body), JSON.stringify(validPayload.errors)).toBe(true);
      expect(r.body).toMatchObject({
        type: "budget.threshold_reached",
        data: {
          budgetId: budget.body.id,
          name: "watch the key",
          scope: { type: "api_key", apiKeyId: org.flow.apiKeyId },
          period: "month",
          action: "alert",
          limitUsd: 4 * RUN_COST,
        },
      });
      expect(r.body.data.spentUsd).toBeGreaterThanOrEqual(r.body.data.threshold * 4 * RUN_COST - 1e-9);
    }
    expect(
      signatureValid(`whsec_${Buffer.from("wrong").toString("base64")}`, got[0]?.headers ?? {}, got[0]?.text ?? ""),
    ).toBe(false);
  }, 120_000);

  it("a budget scoped to a prompt refuses that prompt's runs only, on /v1/* too", async () => {
    const org = await organization();
    const other = await createTestClient(running.base).createPublishedPrompt(org.flow.token, org.flow.organizationId, {
      model: "stub/priced",
      systemPrompt: "Other.",
    });
    const created = await api(org.flow, "POST", "/api/budgets", {
      organizationId: org.flow.organizationId,
      name: "one prompt",
      scope: { type: "prompt", promptId: org.promptId },
      limitUsd: 1.5 * RUN_COST,
      period: "month",
      action: "block",
    });
    expect(created.status).toBe(201);
    const v1 = (promptId: string) =>
      fetch(`${running.base}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${org.flow.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: `kiln/${promptId}`, messages: [{ role: "user", content: "hi" }] }),
      });
    expect((await v1(org.promptId)).status).toBe(200);
    expect((await run(org, { token: org.flow.token })).status).toBe(201);
    const before = stub.requests.length;
    const refused = await v1(org.promptId);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await run(org, { apiKey: org.flow.apiKey })).status).toBe(429);
    expect(stub.requests.length).toBe(before);
    expect((await v1(other.prompt.id)).status).toBe(200);
  }, 120_000);

  it("a budget scoped to an API key refuses that key only", async () => {
    const org = await organization();
    const second = await api(org.flow, "POST", "/api/api-keys", {
      organizationId: org.flow.organizationId,
      name: "other",
      scopes: SCOPES,
    });
    expect(second.status).toBe(201);
    const created = await api(org.flow, "POST", "/api/budgets", {
      organizationId: org.flow.organizationId,
      name: "ci key",
      scope: { type: "api_key", apiKeyId: org.flow.apiKeyId },
      limitUsd: 2.5 * RUN_COST,
      period: "day",
      action: "block",
    });
    expect(created.status).toBe(201);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await run(org, { apiKey: org.flow.apiKey })).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    expect((await run(org, { apiKey: second.body.key })).status).toBe(201);
    expect((await run(org, { token: org.flow.token })).status).toBe(201);
    expect((await run(org, { apiKey: org.flow.apiKey })).status).toBe(429);
    // The budget's view counts the key's runs only (once the ledger has them, exactly).
    const deadline = Date.now() + 20_000;
    let view: Loose;
    do {
      await sleep(200);
      view = (await api(org.flow, "GET", `/api/budgets/${created.body.id}`)).body;
    } while (Math.abs(view.spentUsd - 3 * RUN_COST) > 1e-9 && Date.now() < deadline);
    expect(view.spentUsd).toBeCloseTo(3 * RUN_COST, 9);
  }, 120_000);
});
