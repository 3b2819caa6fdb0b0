/**
 * POST /api/prompts/:id/run/stream (docs/api.md "Streaming a prompt run") through the SDK's
 * `prompts.stream`, against a provider stub that streams slowly, in both run modes: the first piece
 * reaches the client before the stub has sent its last one (on the stub's own clock), `done` carries
 * the stored run (tokens, cost), a client that aborts leaves the run stored failed with error code
 * `cancelled` and what had arrived, and a refused request is a KilnError (400 with its field, 404,
 * another organization's prompt 404) before any event, running nothing.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded } from "@kiln/launcher/embedded";
import { Kiln, KilnError, type PromptRunStreamEvent } from "@kiln/sdk";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

// biome-ignore lint/suspicious/noExplicitAny: stored runs are read loosely and asserted on.
type Loose = any;

const providersOf = (stub: OpenAIStub) =>
  JSON.stringify([
    { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m", inputPerMTokUsd: 1, outputPerMTokUsd: 2 }] },
  ]);

const modes = [
  {
    name: "embedded mode",
    async start(stub: OpenAIStub) {
      const kiln = await buildEmbedded({
        logger: createLogger({ name: "test", level: "silent" }),
        providers: loadProvidersConfig({ OPENAI_COMPATIBLE_PROVIDERS: providersOf(stub) }),
      });
      const base = await kiln.gateway.app.listen({ host: "127.0.0.1", port: 0 });
      return { base, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start(stub: OpenAIStub) {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        envOf: { execution: { OPENAI_COMPATIBLE_PROVIDERS: providersOf(stub) } },
      });
      return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];

const TEN_WORDS = "one two three four five six seven eight nine ten";

describe.each(modes)("streaming a prompt run over REST in $name", (mode) => {
  let stub: OpenAIStub;
  let running: { base: string; stop: () => Promise<void> };
  let flow: FlowResult;
  let kiln: Kiln;
  let promptId: string;

  beforeAll(async () => {
    stub = await startOpenAIStub({});
    running = await mode.start(stub);
    flow = await runIdentityFlow(running.base, ["prompts:read", "runs:write", "runs:read"]);
    const { prompt } = await createTestClient(running.base).createPublishedPrompt(flow.token, flow.organizationId, {
      model: "stub/m",
      systemPrompt: "Count to ten for {{person}}.",
      variablesSchema: { type: "object", properties: { person: { type: "string" } }, required: ["person"] },
    });
    promptId = prompt.id;
    kiln = new Kiln({ baseUrl: running.base, apiKey: flow.apiKey, maxRetries: 0 });
  }, 180_000);
  afterAll(async () => {
    await running?.stop();
    await stub?.close();
  });

  async function storedRun(id: string): Promise<Loose> {
    for (let i = 0; i < 100; i++) {
      const got = await call(running.base, "GET", `/api/runs/${id}`, { token: flow.token });
      if (got.status === 200) return got.body;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`run ${id} was not stored`);
  }

  const body = { organizationId: "", variables: { person: "Ada" } };

  it("yields start, each piece as the provider sends it, then done with the stored run", async () => {
    stub.reset();
    stub.script(stubReply.text(TEN_WORDS, { usage: { prompt_tokens: 12, completion_tokens: 10 }, chunkDelayMs: 40 }));
    const events: PromptRunStreamEvent[] = [];
    const pieceAt: number[] = [];
    for await (const event of kiln.prompts.stream(promptId, { ...body, organizationId: flow.organizationId })) {
      events.push(event);
      if (event.type === "text") pieceAt.push(stub.now());
    }
    const [start, ...rest] = events;
    expect(start).toEqual({ type: "start", runId: expect.stringMatching(/^run_/) });
    const runId = start?.type === "start" ? start.runId : "";
    const texts = rest.filter((e) => e.type === "text").map((e) => (e.type === "text" ? e.delta : ""));
    expect(texts).toHaveLength(10);
    expect(texts.join("")).toBe(TEN_WORDS);
    // The first piece reached the client while the stub was still streaming the rest.
    expect(pieceAt[0]).toBeLessThan(stub.streams[0]?.lastChunkAtMs ?? 0);
    const done = events.at(-1);
    expect(done?.type).toBe("done");
    const run = done?.type === "done" ? done.run : undefined;
    expect(run).toMatchObject({
      id: runId,
      kind: "prompt",
      status: "succeeded",
      promptId,
      output: { text: TEN_WORDS },
      usage: { inputTokens: 12, outputTokens: 10 },
      estimatedCostUsd: (12 * 1 + 10 * 2) / 1_000_000,
      input: { variables: { person: "Ada" } },
    });
    expect(await storedRun(runId)).toMatchObject({ id: runId, status: "succeeded", output: { text: TEN_WORDS } });
    expect(stub.requests.at(-1)?.body).toMatchObject({ stream: true });
  });

  it("cancels the run when the client aborts: stored failed, code cancelled, with what had arrived", async () => {
    stub.reset();
    stub.script(stubReply.text(TEN_WORDS, { chunkDelayMs: 60 }));
    const abort = new AbortController();
    let runId = "";
    let received = "";
    const ended = await (async () => {
      for await (const event of kiln.prompts.stream(
        promptId,
        { ...body, organizationId: flow.organizationId },
        { signal: abort.signal },
      )) {
        if (event.type === "start") runId = event.runId;
        if (event.type === "text") {
          received += event.delta;
          if (received.split(" ").length > 2) abort.abort();
        }
      }
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(ended).toBeInstanceOf(Error);
    expect(received).toBe("one two ");
    const run = await storedRun(runId);
    expect(run.status).toBe("failed");
    expect(run.error.code).toBe("cancelled");
    expect(run.output.text.startsWith(received)).toBe(true);
    expect(run.output.text.length).toBeLessThan(TEN_WORDS.length);
    await expect.poll(() => stub.streams[0]?.closedEarly).toBe(true);
  });

  it("refuses bad variables, an unknown prompt and another organization's prompt before any event", async () => {
    stub.reset();
    const failure = async (events: AsyncIterable<unknown>) => {
      const seen: unknown[] = [];
      const error = await (async () => {
        for await (const e of events) seen.push(e);
      })().then(
        () => null,
        (e: unknown) => e,
      );
      expect(seen).toEqual([]);
      expect(error).toBeInstanceOf(KilnError);
      return error as KilnError;
    };
    const bad = await failure(
      kiln.prompts.stream(promptId, { organizationId: flow.organizationId, variables: { person: 7 } }),
    );
    expect(bad).toMatchObject({ status: 400, code: "invalid_argument" });
    expect(bad.details.map((d) => d.field)).toContain("variables.person");
    const unknown = await failure(kiln.prompts.stream("prm_missing", { ...body, organizationId: flow.organizationId }));
    expect(unknown).toMatchObject({ status: 404, code: "not_found" });
    const other = await runIdentityFlow(running.base, ["prompts:read", "runs:write"]);
    const otherKiln = new Kiln({ baseUrl: running.base, apiKey: other.apiKey, maxRetries: 0 });
    const foreign = await failure(
      otherKiln.prompts.stream(promptId, { ...body, organizationId: other.organizationId }),
    );
    expect(foreign).toMatchObject({ status: 404, code: "not_found" });
    // Nothing reached the model.
    expect(stub.requests).toHaveLength(0);
  });
});
