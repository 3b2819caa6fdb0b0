import { Code, ConnectError } from "@connectrpc/connect";
import { DomainError } from "@kiln/kit/errors";
import { toConnectError } from "@kiln/kit/rpc/errors";
import { fastify } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpError, handleError } from "./errors.js";
import { handleOpenAiError } from "./routes/openai-errors.js";

/** Every 429 carries Retry-After (api.md "Errors"), whatever refused the request. */
describe("Retry-After on every 429", () => {
  const app = fastify();
  beforeAll(async () => {
    // As the execution service's ingestion bound refuses (over RPC), and as a Connect code alone.
    app.post("/otel/v1/traces", async () => {
      throw toConnectError(new DomainError("resource_exhausted", "trace ingestion is busy: retry later"));
    });
    app.get("/api/x", async () => {
      throw new ConnectError("busy", Code.ResourceExhausted);
    });
    app.get("/api/named", async () => {
      throw new HttpError("resource_exhausted", "wait", [], { "retry-after": "30" });
    });
    app.post("/v1/chat/completions", async () => {
      throw new DomainError("resource_exhausted", "quota");
    });
    app.setErrorHandler((error, request, reply) =>
      request.url.startsWith("/v1/") ? handleOpenAiError(error, request, reply) : handleError(error, request, reply),
    );
    await app.ready();
  });
  afterAll(() => app.close());

  it("sets the default on a refusal that named no wait, in the envelope and in OpenAI's shape", async () => {
    for (const [method, url] of [
      ["POST", "/otel/v1/traces"],
      ["GET", "/api/x"],
      ["POST", "/v1/chat/completions"],
    ] as const) {
      const r = await app.inject({ method, url });
      expect(r.statusCode).toBe(429);
      expect(r.headers["retry-after"]).toBe("1");
    }
  });

  it("keeps the wait a refusal named", async () => {
    const r = await app.inject({ method: "GET", url: "/api/named" });
    expect(r.statusCode).toBe(429);
    expect(r.headers["retry-after"]).toBe("30");
  });
});
