/**
 * Real streaming on /v1/chat/completions (docs/openai-compatible.md "Streaming"), called with the
 * published `openai` SDK against a provider stub that streams slowly: the first chunk reaches the
 * client before the stub has sent its last one (ordered on the stub's own clock), usage and Kiln's
 * cost in the last chunk, the run stored with the whole output and tokens, and a client that
 * aborts mid-stream leaves a run stored as cancelled with what had arrived. Embedded and
 * distributed.
 */
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: SDK errors are read loosely and asserted on.
type Loose = any;

/** $1 and $2 per million tokens: a cost that is not 0. */
const providersOf = (stub: OpenAIStub) =>
  JSON.stringify([
    { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m", inputPerMTokUsd: 1, outputPerMTokUsd: 2 }] },
  ]);
const costOf = (input: number, output: number) => (input * 1 + output * 2) / 1_000_000;

const TEN_WORDS = "one two three four five six seven eight nine ten";

describe.each(PROVIDER_MODES)("streaming chat completions in $name", (mode) => {
  let stub: OpenAIStub;
  let running: RunningKiln;
  let flow: FlowResult;
  let openai: OpenAI;
  let model: string;

  beforeAll(async () => {
    stub = await startOpenAIStub({});
    running = await mode.start({ OPENAI_COMPATIBLE_PROVIDERS: providersOf(stub) });
    flow = await runIdentityFlow(running.base, ["prompts:read", "skills:read", "runs:write", "runs:read"]);
    const { prompt } = await createTestClient(running.base).createPublishedPrompt(flow.token, flow.organizationId, {
      model: "stub/m",
      systemPrompt: "Count to ten.",
    });
    model = `kiln/${prompt.id}`;
    openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${running.base}/v1`, maxRetries: 0 });
  }, 180_000);
  afterAll(async () => {
    await running?.stop();
    await stub?.close();
  });

  /** The stored run, once it is stored (a cancelled run is stored after the client has gone). */
  async function storedRun(id: string): Promise<Loose> {
    for (let i = 0; i < 100; i++) {
      const got = await call(running.base, "GET", `/api/runs/${id}`, { token: flow.token });
      if (got.status === 200) return got.body;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`run ${id} was not stored`);
  }

  it("sends each chunk as the provider sends it, usage and cost last, and stores the whole run", async () => {
    stub.reset();
    stub.script(stubReply.text(TEN_WORDS, { usage: { prompt_tokens: 12, completion_tokens: 10 }, chunkDelayMs: 40 }));
    const { data: stream, response } = await openai.chat.completions
      .create({
        model,
        messages: [{ role: "user", content: "Go" }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    const runId = response.headers.get("x-kiln-run-id") ?? "";
    expect(runId).toMatch(/^run_[0-9a-f]{32}$/);
    const pieces: { text: string; atMs: number }[] = [];
    const chunks: Loose[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      const text = chunk.choices[0]?.delta.content;
      if (text) pieces.push({ text, atMs: stub.now() });
    }
    const [sent] = stub.streams;
    // The first piece reached the client while the stub was still streaming the rest.
    expect(sent?.chunks).toBe(10);
    expect(pieces.length).toBe(10);
    expect(pieces[0]?.atMs).toBeLessThan(sent?.lastChunkAtMs ?? 0);
    expect(pieces.map((p) => p.text).join("")).toBe(TEN_WORDS);
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunks.every((c) => c.id === runId && c.model === model)).toBe(true);
    expect(chunks.at(-2).choices[0].finish_reason).toBe("stop");
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({
      prompt_tokens: 12,
      completion_tokens: 10,
      total_tokens: 22,
      cost_usd: costOf(12, 10),
    });
    // Kiln asked the provider for a stream with its usage.
    expect(stub.requests.at(-1)?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });

    const run = await storedRun(runId);
    expect(run.status).toBe("succeeded");
    expect(run.output).toEqual({ text: TEN_WORDS });
    expect(run.usage).toEqual({ inputTokens: 12, outputTokens: 10 });
    expect(run.estimatedCostUsd).toBe(costOf(12, 10));
  });

  it("stores the run as cancelled, with what had arrived, when the client aborts mid-stream", async () => {
    stub.reset();
    stub.script(stubReply.text(TEN_WORDS, { chunkDelayMs: 60 }));
    const { data: stream, response } = await openai.chat.completions
      .create({ model, messages: [{ role: "user", content: "Go" }], stream: true })
      .withResponse();
    const runId = response.headers.get("x-kiln-run-id") ?? "";
    let received = "";
    let count = 0;
    for await (const chunk of stream) {
      received += chunk.choices[0]?.delta.content ?? "";
      if (chunk.choices[0]?.delta.content && ++count === 2) break; // leaving the loop aborts the request
    }
    expect(received).toBe("one two ");
    const run = await storedRun(runId);
    expect(run.status).toBe("failed");
    expect(run.error.code).toBe("cancelled");
    // What Kiln had received from the provider, at least what reached the client, never the whole.
    expect(run.output.text.startsWith(received)).toBe(true);
    expect(run.output.text.length).toBeLessThan(TEN_WORDS.length);
    // The provider call was abandoned too.
    await expect.poll(() => stub.streams[0]?.closedEarly).toBe(true);
  });

  it("answers a provider failure before the first chunk as JSON (502, not retried), after it as an error event", async () => {
    stub.reset();
    stub.script(stubReply.error(400, { message: "bad request upstream" }));
    const before: Loose = await openai.chat.completions
      .create({ model, messages: [{ role: "user", content: "Go" }], stream: true })
      .then(
        () => null,
        (e) => e,
      );
    expect(before).toBeInstanceOf(OpenAI.APIError);
    expect(before.status).toBe(502);
    expect(before.headers.get("x-should-retry")).toBe("false");

    stub.script(stubReply.text(TEN_WORDS, { chunkDelayMs: 20, breakAfterChunks: 3 }));
    const stream = await openai.chat.completions.create({
      model,
      messages: [{ role: "user", content: "Go" }],
      stream: true,
    });
    let received = "";
    const midway: Loose = await (async () => {
      for await (const chunk of stream) received += chunk.choices[0]?.delta.content ?? "";
    })().then(
      () => null,
      (e) => e,
    );
    expect(received).toBe("one two three ");
    expect(midway).toBeInstanceOf(OpenAI.APIError);
    expect(midway.error.code).toBe("provider_error");
    const run = await storedRun(midway.error.kiln_run_id);
    expect(run.status).toBe("failed");
  });

  it("streams calls of the caller's tools as tool_calls deltas the SDK assembles", async () => {
    stub.reset();
    stub.script(stubReply.toolCalls([{ name: "lookup", arguments: { city: "Paris" } }], { chunkDelayMs: 5 }));
    const runner = openai.chat.completions.stream({
      model,
      messages: [{ role: "user", content: "Weather?" }],
      tools: [
        {
          type: "function",
          function: { name: "lookup", parameters: { type: "object", properties: { city: { type: "string" } } } },
        },
      ],
    });
    const completion = await runner.finalChatCompletion();
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.tool_calls?.map((c: Loose) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ["lookup", { city: "Paris" }],
    ]);
  });

  it("streams local/echo in pieces; a skill run and an Idempotency-Key request leave whole, then in chunks", async () => {
    const client = createTestClient(running.base);
    const { prompt: echo } = await client.createPublishedPrompt(flow.token, flow.organizationId, {
      model: "local/echo",
      systemPrompt: "Echo {{word}} back, please, in a sentence of several words.",
      variablesSchema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
    });
    const contents = async (m: string, body: Record<string, unknown>, headers?: Record<string, string>) => {
      const { data, response } = await openai.chat.completions
        .create({ model: m, messages: [], stream: true, ...body } as never, headers ? { headers } : undefined)
        .withResponse();
      const pieces: string[] = [];
      for await (const chunk of data as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) {
        const text = chunk.choices[0]?.delta.content;
        if (text) pieces.push(text);
      }
      return { pieces, cost: response.headers.get("x-kiln-cost-usd") };
    };
    // Refused before anything streams: the same 400 and 404 as without streaming.
    const refused: Loose = await contents(`kiln/${echo.id}`, {}).catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.param).toBe("variables.word");
    const noLabel: Loose = await contents(`kiln/${echo.id}@nope`, { variables: { word: "kiln" } }).catch((e) => e);
    expect(noLabel).toBeInstanceOf(OpenAI.NotFoundError);
    const live = await contents(`kiln/${echo.id}`, { variables: { word: "kiln" } });
    expect(live.pieces).toHaveLength(4); // local/echo's four pieces, as the model sent them
    expect(live.cost).toBeNull(); // the cost is known at the end only
    const keyed = await contents(
      `kiln/${echo.id}`,
      { variables: { word: "kiln" } },
      { "idempotency-key": `k-${Date.now()}` },
    );
    expect(keyed.pieces.join("")).toBe(live.pieces.join(""));
    expect(keyed.cost).toBe("0"); // whole first: the cost is in the headers
    const skill = await client.createSkill(flow.token, flow.organizationId, { name: `Echo skill ${Date.now()}` });
    await client.replaceSkillPrompts(flow.token, skill.draftVersionId ?? "", [{ promptId: echo.id, alias: "echo" }]);
    await client.publishSkill(flow.token, skill.id);
    const whole = await contents(`kiln/skill/${skill.id}`, { variables: { word: "kiln" } });
    expect(whole.pieces.join("")).toContain("kiln");
    expect(whole.cost).toBe("0");
  });
});
