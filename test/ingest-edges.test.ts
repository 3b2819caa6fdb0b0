/**
 * The edges of OTLP ingestion over real HTTP (issue #45): fair between organizations, a 413 every
 * client reads (the connection closed in stages), and a user's token refused as such.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded } from "./support/embedded.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

/** An OTLP/JSON export of `count` spans in one trace. */
function exportOf(traceNo: number, count: number) {
  const traceId = hex(traceNo + 1, 32);
  const spans = Array.from({ length: count }, (_, i) => ({
    traceId,
    spanId: hex(i + 1, 16),
    name: "chat gpt-4o-mini",
    startTimeUnixNano: "1000000",
    endTimeUnixNano: "2000000",
    attributes: [{ key: "gen_ai.request.model", value: { stringValue: "gpt-4o-mini" } }],
  }));
  return { traceId, body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }) };
}

/** Sends a body over a raw socket and reads what comes back until the server closes. */
function rawPost(base: string, key: string, body: Buffer): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    socket.on("data", (d) => {
      answer += d.toString("latin1");
      // The answer's head is in: done (the server would linger a while for the rest of the body).
      if (answer.includes("\r\n\r\n")) socket.destroy();
    });
    socket.on("error", (e) => (answer ? resolve(answer) : reject(e)));
    socket.on("close", () => resolve(answer));
    socket.on("connect", () => {
      socket.write(
        `POST /otel/v1/traces HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/x-protobuf\r\n` +
          `x-api-key: ${key}\r\ncontent-length: ${body.length}\r\n\r\n`,
      );
      // In pieces, as a client streaming its body would: still sending when the answer comes.
      let sent = 0;
      const more = () => {
        while (sent < body.length) {
          const piece = body.subarray(sent, sent + 64 * 1024);
          sent += piece.length;
          if (!socket.write(piece)) return socket.once("drain", more);
        }
      };
      more();
    });
  });
}

describe("OTLP ingestion's edges (embedded)", () => {
  let stop: () => Promise<void>;
  let base: string;
  let a: FlowResult;
  let b: FlowResult;

  beforeAll(async () => {
    const { kiln, baseUrl } = await startEmbedded();
    stop = () => kiln.close();
    base = baseUrl;
    a = await runIdentityFlow(base, ["traces:write", "traces:read"]);
    b = await runIdentityFlow(base, ["traces:write", "traces:read"]);
  }, 180_000);

  afterAll(async () => {
    await stop?.();
  });

  it("answers an over-limit body 413 every time, read by Node's fetch and by a raw socket", async () => {
    const big = Buffer.alloc(5 * 1024 * 1024, 7);
    const statuses: (number | string)[] = [];
    for (let i = 0; i < 10; i++) {
      try {
        const r = await fetch(`${base}/otel/v1/traces`, {
          method: "POST",
          headers: { "content-type": "application/x-protobuf", "x-api-key": a.apiKey },
          body: big,
        });
        statuses.push(r.status);
        expect(r.headers.get("connection")).toBe("close");
        expect(((await r.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
      } catch (e) {
        statuses.push(String((e as { cause?: { code?: string } }).cause?.code ?? e));
      }
    }
    expect(statuses).toEqual(Array(10).fill(413));
    const raw: string[] = [];
    for (let i = 0; i < 10; i++) raw.push((await rawPost(base, a.apiKey, big)).split("\r\n")[0] ?? "");
    expect(raw).toEqual(Array(10).fill("HTTP/1.1 413 Payload Too Large"));
  }, 120_000);

  it("refuses a user's token with 403 permission_denied in the envelope, not a missing organizationId", async () => {
    const r = await call(base, "POST", "/otel/v1/traces", { token: a.token, body: { resourceSpans: [] } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("permission_denied");
    expect(r.body.error.message).toMatch(/API key/);
  });

  it("lets another organization's small export through while one organization's large export is ingested", async () => {
    const large = exportOf(1, 2_000);
    const small = exportOf(2, 1);
    const post = (key: string, body: string) =>
      fetch(`${base}/otel/v1/traces`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body,
      }).then(async (r) => ({ status: r.status, at: performance.now() }));
    const largeDone = post(a.apiKey, large.body);
    // Once the large one is being ingested (its first spans are stored), the other organization sends one span.
    for (;;) {
      const got = await call(base, "GET", `/api/traces/${large.traceId}`, { apiKey: a.apiKey });
      if (got.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const smallDone = await post(b.apiKey, small.body);
    expect(smallDone.status).toBe(200);
    const largeResult = await largeDone;
    expect(largeResult.status).toBe(200);
    // Acknowledged between two pieces of the large export, not after all of it (and its rest).
    expect(smallDone.at).toBeLessThan(largeResult.at);
    const stored = await call(base, "GET", `/api/traces/${small.traceId}`, { apiKey: b.apiKey });
    expect(stored.status).toBe(200);
  }, 300_000);
});
