/**
 * The OpenAI provider's Responses API path when things go wrong, against the OpenAI stub: 401/403
 * not retried (the key never shown), 429 after its Retry-After and 5xx retried, waits past the
 * deadline, failed responses plain and streamed, error events and broken streams, hangs and
 * aborts; and Azure's v1 Responses URL, header and deployment.
 */
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIProvider, type OpenAIProviderOptions } from "./openai-provider.js";
import { type ModelDelta, type ModelRequest, ProviderError } from "./provider.js";

const API_KEY = "sk-test-0123456789abcdef";
let stub: OpenAIStub;

beforeAll(async () => {
  stub = await startOpenAIStub({ apiKey: API_KEY });
});
afterAll(() => stub.close());
beforeEach(() => stub.reset());

function provider(options: Partial<OpenAIProviderOptions> = {}) {
  return createOpenAIProvider({
    id: "openai",
    apiKey: API_KEY,
    baseUrl: stub.baseUrl,
    timeoutMs: 5_000,
    maxRetries: 2,
    ...options,
  });
}

const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "gpt-5-codex",
  messages: [{ role: "user", content: "Fix the bug." }],
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

/** A fetch answering one event stream of these SSE lines, for what the stub does not send. */
function streamingFetch(events: string[]): typeof fetch {
  return async () =>
    new Response(events.map((e) => `${e}\n\n`).join(""), {
      status: 200,
      headers: { "content-type": "text/event-stream" },
    });
}

describe("the Responses API: retries and errors", () => {
  it("fails a 401 at once, not retried, with the key redacted from OpenAI's message", async () => {
    const error = await failure(provider({ apiKey: "sk-proj-WRONGKEY0123456789" }).generate(request()));
    expect(error).toMatchObject({ kind: "provider_error", status: 401, retries: 0 });
    expect(error.message).toBe("openai answered HTTP 401: Incorrect API key provided: [redacted]");
    expect(stub.requests.map((r) => r.path)).toEqual(["/v1/responses"]);
  });

  it("fails a 403 at once with the error body's message", async () => {
    stub.script(
      stubReply.error(403, { message: "Project does not have access to model o3-pro", code: "model_not_found" }),
    );
    const error = await failure(provider().generate(request()));
    expect(error).toMatchObject({ kind: "provider_error", status: 403, retries: 0 });
    expect(error.message).toBe("openai answered HTTP 403: Project does not have access to model o3-pro");
    expect(stub.requests).toHaveLength(1);
  });

  it("retries a 429 after the Retry-After it was given, counting the retries", async () => {
    stub.script(
      stubReply.rateLimited({ retryAfterMs: 200 }),
      stubReply.rateLimited({ retryAfterSeconds: 0.2 }),
      stubReply.text("ok"),
    );
    const result = await provider().generate(request());
    expect(result).toMatchObject({ text: "ok", retries: 2 });
    const [a, b, c] = stub.requests;
    expect(b!.atMs - a!.atMs).toBeGreaterThanOrEqual(195);
    expect(c!.atMs - b!.atMs).toBeGreaterThanOrEqual(195);
  });

  it("fails a 429 at once when its Retry-After reaches past the deadline, and says the wait", async () => {
    stub.script(stubReply.rateLimited({ retryAfterSeconds: 30 }), stubReply.text("too late"));
    const error = await failure(provider().generate(request({ timeoutMs: 2_000 })));
    expect(error).toMatchObject({ kind: "provider_error", status: 429, retries: 0, retryAfterMs: 30_000 });
    expect(error.message).toContain("past the deadline");
  });

  it("retries 5xx and fails with the last one once the retries are used up", async () => {
    stub.script(stubReply.serverError({ retryAfterMs: 10 }), stubReply.text("ok"));
    expect(await provider().generate(request())).toMatchObject({ text: "ok", retries: 1 });
    stub.reset();
    stub.script(
      ...stubReply.times(3, stubReply.error(503, { message: "overloaded", headers: { "retry-after-ms": "10" } })),
    );
    const error = await failure(provider().generate(request()));
    expect(error).toMatchObject({ kind: "provider_error", status: 503, retries: 2 });
    expect(error.message).toBe("openai answered HTTP 503: overloaded (after 2 retries)");
  });

  it("fails a response whose status is failed with its error code and message", async () => {
    stub.script(stubReply.failed("The model produced invalid content."));
    const error = await failure(provider().generate(request()));
    expect(error).toMatchObject({ kind: "provider_error", status: undefined });
    expect(error.message).toBe("openai answered a failed response: server_error: The model produced invalid content.");
  });

  it("fails a stream that ends with response.failed, and one that breaks off, without retrying", async () => {
    stub.script(
      stubReply.failed("overloaded"),
      stubReply.text("one two three four", { breakAfterChunks: 2, chunkDelayMs: 10 }),
      stubReply.text("x"),
    );
    const failed = await failure(provider().generate(request({ onDelta: () => {} })));
    expect(failed.message).toBe("openai: the response failed: server_error: overloaded");
    const deltas: ModelDelta[] = [];
    const broken = await failure(provider().generate(request({ onDelta: (d) => deltas.push(d) })));
    expect(broken.kind).toBe("provider_error");
    expect(deltas).toEqual([
      { type: "text", text: "one " },
      { type: "text", text: "two " },
    ]);
    expect(stub.requests).toHaveLength(2);
    expect(stub.pending()).toBe(1);
  });

  it("fails a stream with an error event, or an event that is not JSON, or no final event", async () => {
    const created =
      'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"output":[]}}';
    const cases: [string[], string][] = [
      [
        [
          created,
          'event: error\ndata: {"type":"error","code":"server_error","message":"boom","param":null,"sequence_number":1}',
        ],
        "openai: the stream ended with an error: boom",
      ],
      [[created, "data: {not json"], "openai: a streamed event is not JSON"],
      [[created], "openai: the stream ended before the answer did"],
    ];
    for (const [events, message] of cases) {
      const error = await failure(
        provider({ fetch: streamingFetch(events), maxRetries: 0 }).generate(request({ onDelta: () => {} })),
      );
      expect(error.message).toBe(message);
    }
  });

  it("fails with provider_timeout on a hang, and with the caller's reason on a cancel", async () => {
    stub.script(stubReply.hang(), stubReply.hang());
    const timedOut = await failure(provider().generate(request({ timeoutMs: 200 })));
    expect(timedOut).toMatchObject({ kind: "provider_timeout", message: "openai did not answer within 200 ms" });
    const controller = new AbortController();
    const cancelled = provider().generate(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error("run cancelled")), 50);
    await expect(cancelled).rejects.toThrow("run cancelled");
  });

  it("ends a stream being read when the caller aborts", async () => {
    stub.script(stubReply.text("one two three four five six", { chunkDelayMs: 100 }));
    const controller = new AbortController();
    const deltas: ModelDelta[] = [];
    const call = provider().generate(
      request({
        signal: controller.signal,
        onDelta: (d) => {
          deltas.push(d);
          if (deltas.length === 2) controller.abort(new Error("client gone"));
        },
      }),
    );
    await expect(call).rejects.toThrow("client gone");
    expect(deltas).toHaveLength(2);
  });
});

describe("Azure OpenAI's Responses API", () => {
  it("posts to {base}/openai/v1/responses with the api-key header and the deployment as the model", async () => {
    const sent: { url: string; headers: Record<string, string>; body: Record<string, unknown> }[] = [];
    const fetch: typeof globalThis.fetch = async (url, init) => {
      sent.push({
        url: String(url),
        headers: init?.headers as Record<string, string>,
        body: JSON.parse(String(init?.body)),
      });
      const output = [
        {
          type: "message",
          id: "m",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "hi", annotations: [] }],
        },
      ];
      return Response.json({
        id: "resp_1",
        object: "response",
        status: "completed",
        output,
        usage: { input_tokens: 3, output_tokens: 1 },
      });
    };
    const azure = createOpenAIProvider({
      id: "contoso",
      apiKey: "azure-key-0123456789",
      baseUrl: "https://contoso.openai.azure.com/",
      azure: { apiVersion: "2024-10-21", deployments: { "o3-pro": "o3pro-east" } },
      timeoutMs: 2_000,
      maxRetries: 0,
      fetch,
    });
    const result = await azure.generate(request({ model: "o3-pro" }));
    expect(result).toMatchObject({ text: "hi", usage: { inputTokens: 3, outputTokens: 1 } });
    expect(sent[0]?.url).toBe("https://contoso.openai.azure.com/openai/v1/responses");
    expect(sent[0]?.headers["api-key"]).toBe("azure-key-0123456789");
    expect(sent[0]?.headers).not.toHaveProperty("authorization");
    expect(sent[0]?.body).toMatchObject({ model: "o3pro-east", store: false });
  });
});
