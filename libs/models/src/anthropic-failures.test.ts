import { type AnthropicStub, anthropicReply, startAnthropicStub } from "@kiln/testing/anthropic-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AnthropicProviderOptions, createAnthropicProvider } from "./anthropic-provider.js";
import { type ModelRequest, ProviderError } from "./provider.js";

const API_KEY = "sk-ant-api03-failures0123456789";
let stub: AnthropicStub;

beforeAll(async () => {
  stub = await startAnthropicStub({ apiKey: API_KEY });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

const provider = (options: Partial<AnthropicProviderOptions> = {}) =>
  createAnthropicProvider({
    id: "anthropic",
    apiKey: API_KEY,
    baseUrl: stub.baseUrl,
    timeoutMs: 5_000,
    maxRetries: 2,
    ...options,
  });

const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "claude-sonnet-4-6",
  messages: [{ role: "user", content: "hi" }],
  ...extra,
});

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe("createAnthropicProvider: failures and retries", () => {
  it("fails with provider_error 401 on a bad key, not retried, with the error type and no key shown", async () => {
    const e = await failure(provider({ apiKey: "sk-ant-api03-wrongwrongwrong" }).generate(request()));
    expect(e).toMatchObject({ kind: "provider_error", status: 401, retries: 0, provider: "anthropic" });
    expect(e.message).toContain("authentication_error: invalid x-api-key");
    expect(e.message).not.toContain("wrongwrongwrong");
    expect(stub.requests).toHaveLength(1);
  });

  it("does not retry a 400, and says the API's error type and message", async () => {
    stub.script(
      anthropicReply.error(400, "invalid_request_error", "max_tokens: must be greater than thinking.budget_tokens"),
    );
    const e = await failure(provider().generate(request()));
    expect(e).toMatchObject({ status: 400, retries: 0 });
    expect(e.message).toBe(
      "anthropic answered HTTP 400: invalid_request_error: max_tokens: must be greater than thinking.budget_tokens",
    );
  });

  it("retries 429, 500 and 529 overloaded_error, honouring retry-after, and counts the retries", async () => {
    stub.script(
      anthropicReply.rateLimited({ retryAfterSeconds: 0 }),
      anthropicReply.overloaded({ retryAfterSeconds: 0 }),
      anthropicReply.text("finally"),
    );
    const result = await provider().generate(request());
    expect(result).toMatchObject({ text: "finally", retries: 2 });
    expect(stub.requests).toHaveLength(3);
  });

  it("waits the retry-after it was asked (seconds)", async () => {
    stub.script(anthropicReply.overloaded({ retryAfterSeconds: 1 }), anthropicReply.text("ok"));
    const started = Date.now();
    const result = await provider().generate(request());
    expect(result.retries).toBe(1);
    const waited = (stub.requests[1]?.atMs ?? 0) - (stub.requests[0]?.atMs ?? 0);
    expect(waited).toBeGreaterThanOrEqual(990);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("fails with the 529 once the retries are used up", async () => {
    stub.script(...anthropicReply.times(3, anthropicReply.overloaded({ retryAfterSeconds: 0 })));
    const e = await failure(provider().generate(request()));
    expect(e).toMatchObject({ kind: "provider_error", status: 529, retries: 2 });
    expect(e.message).toBe("anthropic answered HTTP 529: overloaded_error: Overloaded (after 2 retries)");
  });

  it("retries a 500 api_error with the backoff and then succeeds", async () => {
    stub.script(anthropicReply.serverError(), anthropicReply.text("ok"));
    const result = await provider().generate(request());
    expect(result.retries).toBe(1);
    const waited = (stub.requests[1]?.atMs ?? 0) - (stub.requests[0]?.atMs ?? 0);
    expect(waited).toBeGreaterThanOrEqual(370);
  });

  it("fails at once with the 429 when retry-after reaches past the deadline", async () => {
    stub.script(anthropicReply.rateLimited({ retryAfterSeconds: 30 }));
    const started = Date.now();
    const e = await failure(provider({ timeoutMs: 2_000 }).generate(request()));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(e).toMatchObject({ status: 429, retryAfterMs: 30_000 });
    expect(e.message).toContain("rate_limit_error");
    expect(e.message).toContain("past the deadline");
  });

  it("fails with provider_timeout within the deadline when Anthropic hangs", async () => {
    stub.script(anthropicReply.hang());
    const started = Date.now();
    const e = await failure(provider({ timeoutMs: 300 }).generate(request()));
    expect(e.kind).toBe("provider_timeout");
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("rejects with the caller's own reason on a cancel, and with provider_timeout on a caller's timeout", async () => {
    stub.script(anthropicReply.hang(), anthropicReply.hang());
    const controller = new AbortController();
    const cancel = new Error("client went away");
    const call = provider().generate(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(cancel), 50);
    await expect(call).rejects.toBe(cancel);
    const timedOut = await failure(provider().generate(request({ signal: AbortSignal.timeout(100) })));
    expect(timedOut.kind).toBe("provider_timeout");
  });

  it("fails with provider_error when Anthropic cannot be reached", async () => {
    const e = await failure(provider({ baseUrl: "http://127.0.0.1:1", maxRetries: 0 }).generate(request()));
    expect(e.message).toBe("could not reach anthropic (ECONNREFUSED)");
  });

  it("fails with provider_error on an answer that is not a message", async () => {
    stub.script({ type: "error", status: 200, body: { type: "message" } });
    const e = await failure(provider().generate(request()));
    expect(e.message).toBe("anthropic answered without content");
  });
});
