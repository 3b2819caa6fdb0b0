/**
 * The SDK's retries, Retry-After, timeouts and Idempotency-Key over real HTTP: a small proxy in
 * front of a live embedded gateway answers what a test scripts (a 429 or 503, a lost answer, a
 * stall) and forwards everything else; and the real gateway's own rate limit.
 */
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded } from "@kiln/launcher/embedded";
import { Kiln, KilnError, KilnTimeoutError } from "@kiln/sdk";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";

/** What the proxy does with the next request: answer itself, forward and then answer, or stall. */
type Step =
  | { answer: number; retryAfter?: string }
  | { forwardThenAnswer: number }
  | { stallMs: number }
  /** The connection is cut before any answer (a server that went away under the request). */
  | { reset: true }
  | { forward: true };

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Set when the request reached the gateway. */
  replayed?: boolean;
}

let kiln: EmbeddedKiln;
let gatewayUrl: string;
let proxy: Server;
let proxyUrl: string;
let script: Step[] = [];
let seen: Seen[] = [];
let accessToken: string;
let organizationId: string;
let promptId: string;

const envelope = (code: string) =>
  JSON.stringify({ error: { code, message: `scripted ${code}`, details: [], requestId: "req_proxy" } });

async function forward(method: string, url: string, headers: IncomingHttpHeaders, body: string) {
  const response = await fetch(`${gatewayUrl}${url}`, {
    method,
    headers: Object.fromEntries(
      Object.entries(headers).filter((e): e is [string, string] => typeof e[1] === "string" && e[0] !== "host"),
    ),
    body: body === "" ? undefined : body,
  });
  return { response, text: await response.text() };
}

beforeAll(async () => {
  ({ kiln, baseUrl: gatewayUrl } = await startEmbedded());
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const entry: Seen = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body };
    seen.push(entry);
    const step = script.shift() ?? { forward: true };
    if ("answer" in step) {
      const headers: Record<string, string> = { "content-type": "application/json", "x-request-id": "req_proxy" };
      if (step.retryAfter !== undefined) headers["retry-after"] = step.retryAfter;
      res.writeHead(step.answer, headers).end(envelope(step.answer === 429 ? "resource_exhausted" : "unavailable"));
      return;
    }
    if ("reset" in step) {
      req.socket.destroy();
      return;
    }
    if ("stallMs" in step) await new Promise((resolve) => setTimeout(resolve, step.stallMs));
    if (res.destroyed) return;
    const { response, text } = await forward(entry.method, entry.url, req.headers, body);
    entry.replayed = response.headers.get("idempotent-replayed") === "true";
    if ("forwardThenAnswer" in step) {
      // The gateway did the work; its answer is lost on the way back.
      res.writeHead(step.forwardThenAnswer, { "content-type": "application/json" }).end(envelope("unavailable"));
      return;
    }
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(text);
  });
  proxy.listen(0, "127.0.0.1");
  await once(proxy, "listening");
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

  const api = createTestClient(gatewayUrl);
  const user = await api.signUp();
  accessToken = user.accessToken;
  organizationId = (await api.onboard(accessToken)).organization.id;
  const published = await api.createPublishedPrompt(accessToken, organizationId, {
    systemPrompt: "Hello {{name}}",
    variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  });
  promptId = published.prompt.id;
});

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  await kiln?.close();
});

beforeEach(() => {
  script = [];
  seen = [];
});

const viaProxy = (options: Partial<ConstructorParameters<typeof Kiln>[0]> = {}) =>
  new Kiln({ baseUrl: proxyUrl, accessToken, ...options });

describe("retries", () => {
  it("waits as long as a 429's Retry-After says, then succeeds with the same request", async () => {
    script = [{ answer: 429, retryAfter: "1" }];
    const started = Date.now();
    const prompt = await viaProxy().prompts.get(promptId);
    expect(prompt.id).toBe(promptId);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ["GET", `/api/prompts/${promptId}`],
      ["GET", `/api/prompts/${promptId}`],
    ]);
  });

  it("retries a 503 without Retry-After with backoff, resending the same body", async () => {
    script = [{ answer: 503 }, { answer: 503 }];
    const prompt = await viaProxy().prompts.create({ organizationId, name: "Retried" });
    expect(prompt.name).toBe("Retried");
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.body))).toEqual(new Set([JSON.stringify({ organizationId, name: "Retried" })]));
  });

  it("gives up after maxRetries with the last answer as a KilnError", async () => {
    script = [
      { answer: 503, retryAfter: "0" },
      { answer: 503, retryAfter: "0" },
    ];
    const error = await viaProxy({ maxRetries: 1 })
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KilnError);
    expect(error).toMatchObject({ status: 503, code: "unavailable", requestId: "req_proxy", retryAfterMs: 0 });
    expect(seen).toHaveLength(2);
  });

  it("does not retry when Retry-After asks for longer than maxRetryDelayMs", async () => {
    script = [{ answer: 429, retryAfter: "120" }];
    const error = await viaProxy({ maxRetryDelayMs: 5_000 })
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, code: "resource_exhausted", retryAfterMs: 120_000 });
    expect(seen).toHaveLength(1);
  });

  it("tries a read again when its connection was cut, and a keyed run, which the server replays or runs once", async () => {
    script = [{ reset: true }];
    expect((await viaProxy().prompts.get(promptId)).id).toBe(promptId);
    expect(seen).toHaveLength(2);
    seen = [];
    script = [{ reset: true }];
    const run = await viaProxy().prompts.run(promptId, { organizationId, variables: { name: "A" } });
    expect(run.status).toBe("succeeded");
    expect(seen).toHaveLength(2);
    expect(seen[1]?.headers["idempotency-key"]).toBe(seen[0]?.headers["idempotency-key"]);
  });

  it("does not try a write without a key again when its connection was cut: it may have been done", async () => {
    script = [{ reset: true }];
    const error = await viaProxy()
      .prompts.create({ organizationId, name: "Cut off" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(seen).toHaveLength(1);
  });

  it("does not retry other errors", async () => {
    const error = await viaProxy()
      .prompts.get("prm_unknown")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, code: "not_found" });
    expect(seen).toHaveLength(1);
  });
});

describe("Idempotency-Key", () => {
  it("makes a retried run replay the first one when its answer was lost", async () => {
    script = [{ forwardThenAnswer: 503 }];
    const run = await viaProxy().prompts.run(promptId, { organizationId, variables: { name: "Ada" } });
    expect(run.status).toBe("succeeded");
    expect(seen).toHaveLength(2);
    const [first, retry] = seen;
    expect(first?.headers["idempotency-key"]).toEqual(expect.any(String));
    expect(retry?.headers["idempotency-key"]).toBe(first?.headers["idempotency-key"]);
    expect([first?.replayed, retry?.replayed]).toEqual([false, true]);
  });

  it("sends the caller's key, and a new key for each call", async () => {
    const sdk = viaProxy();
    await sdk.prompts.run(promptId, { organizationId, variables: { name: "A" } }, { idempotencyKey: "mine-1" });
    await sdk.prompts.run(promptId, { organizationId, variables: { name: "A" } });
    await sdk.prompts.run(promptId, { organizationId, variables: { name: "A" } });
    const keys = seen.map((s) => s.headers["idempotency-key"]);
    expect(keys[0]).toBe("mine-1");
    expect(new Set(keys).size).toBe(3);
  });
});

describe("timeouts and cancellation", () => {
  it("throws KilnTimeoutError when an attempt gets no answer in time, without retrying", async () => {
    script = [{ stallMs: 1_500 }];
    const started = Date.now();
    const error = await viaProxy({ timeoutMs: 300 })
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KilnTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 300, method: "GET" });
    expect(Date.now() - started).toBeLessThan(1_200);
    expect(seen).toHaveLength(1);
  });

  it("a per-call timeout wins over the client's", async () => {
    script = [{ stallMs: 1_000 }];
    const error = await viaProxy({ timeoutMs: 30_000 })
      .models.list({ timeoutMs: 200 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "KilnTimeoutError", timeoutMs: 200 });
  });

  it("stops at the caller's abort signal, which is not a timeout", async () => {
    script = [{ stallMs: 1_000 }];
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await viaProxy()
      .models.list({ signal: controller.signal })
      .catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(KilnTimeoutError);
    expect((error as Error).name).toBe("AbortError");
  });
});

describe("the gateway's own rate limit", () => {
  it("answers 429 with Retry-After; the SDK reports how long to wait when that is over its limit", async () => {
    const limited = await buildEmbedded({
      logger: createLogger({ name: "test", level: "silent" }),
      rateLimitPerMinute: 2,
    });
    try {
      const url = await limited.gateway.app.listen({ host: "127.0.0.1", port: 0 });
      const token = (await createTestClient(url).signUp()).accessToken;
      const sdk = new Kiln({ baseUrl: url, accessToken: token, maxRetryDelayMs: 1_000 });
      await sdk.models.list();
      await sdk.models.list();
      const error = await sdk.models.list().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KilnError);
      expect(error).toMatchObject({ status: 429, code: "resource_exhausted", requestId: expect.any(String) });
      expect((error as KilnError).retryAfterMs).toBeGreaterThan(1_000);
      expect((error as KilnError).retryAfterMs).toBeLessThanOrEqual(60_000);
    } finally {
      await limited.close();
    }
  });
});
