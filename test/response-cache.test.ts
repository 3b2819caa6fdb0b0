/**
 * The response cache (docs/cache.md) over real HTTP in both run modes, against a provider stub that
 * numbers its answers and counts its calls: `Kiln-Cache: ttl=<s>` makes a miss then a hit (no
 * provider call, cost 0, the cost it saved, `Kiln-Cache-Status`), on a prompt run, its stream,
 * /v1/chat/completions through the pinned `openai` package, /v1/responses and /v1/messages; a TTL passes, another organization,
 * other variables, another version or other parameters miss; a failed run is not kept; no header
 * and `no-store` leave the cache alone; a bad header is a 400 naming it.
 */
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: runs and chunks are read loosely and asserted on.
type Loose = any;

/** $1 and $2 per million tokens: a cost that is not 0. */
const providersOf = (stub: OpenAIStub) =>
  JSON.stringify([
    { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m", inputPerMTokUsd: 1, outputPerMTokUsd: 2 }] },
  ]);
const COST = (10 * 1 + 5 * 2) / 1_000_000;
/** Longer than one replayed piece (64 characters), so a replayed stream has several. */
const LONG = "a cached answer is replayed as a stream in pieces, the same events as a live one, ".repeat(3);

describe.each(PROVIDER_MODES)("the response cache in $name", (mode) => {
  let stub: OpenAIStub;
  let running: RunningKiln;
  let flow: FlowResult;
  let promptId: string;
  let answers = 0;

  beforeAll(async () => {
    stub = await startOpenAIStub({
      respond: () => stubReply.text(`answer ${++answers}`, { usage: { prompt_tokens: 10, completion_tokens: 5 } }),
    });
    running = await mode.start({ OPENAI_COMPATIBLE_PROVIDERS: providersOf(stub) });
    flow = await runIdentityFlow(running.base, ["prompts:read", "prompts:write", "runs:write", "runs:read"]);
    promptId = (await publishedPrompt(flow)).id;
  }, 180_000);
  afterAll(async () => {
    await running?.stop();
    await stub?.close();
  });

  async function publishedPrompt(f: FlowResult, systemPrompt = "Greet {{person}}.") {
    const { prompt } = await createTestClient(running.base).createPublishedPrompt(f.token, f.organizationId, {
      model: "stub/m",
      systemPrompt,
      variablesSchema: { type: "object", properties: { person: { type: "string" } } },
    });
    return prompt;
  }

  const run = (cache: string | undefined, body: Loose = {}, f = flow, id = promptId) =>
    call(running.base, "POST", `/api/prompts/${id}/run`, {
      token: f.token,
      body: { organizationId: f.organizationId, variables: { person: "Ada" }, ...body },
      headers: cache === undefined ? {} : { "kiln-cache": cache },
    });

  it("answers the same request again from the cache: no provider call, cost 0, the cost it saved", async () => {
    stub.reset();
    const variables = { person: `Grace ${Date.now()}` };
    const first = await run("ttl=60", { variables });
    expect(first.status).toBe(201);
    expect(first.headers.get("kiln-cache-status")).toBe("miss");
    expect(first.body.cache).toEqual({ status: "miss", ttlSeconds: 60, ttlSource: "request" });
    expect(first.body.estimatedCostUsd).toBe(COST);
    expect(stub.requests).toHaveLength(1);

    const second = await run("ttl=60", { variables });
    expect(second.status).toBe(201);
    expect(second.headers.get("kiln-cache-status")).toBe("hit");
    expect(stub.requests).toHaveLength(1);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body.output).toEqual(first.body.output);
    expect(second.body).toMatchObject({
      status: "succeeded",
      estimatedCostUsd: 0,
      usage: { inputTokens: 0, outputTokens: 0 },
      cache: { status: "hit", savedCostUsd: COST, sourceRunId: first.body.id, ttlSeconds: 60, ttlSource: "request" },
    });
    // Stored as a run of its own, marked as a hit.
    const stored = await call(running.base, "GET", `/api/runs/${second.body.id}`, { token: flow.token });
    expect(stored.body.cache).toEqual(second.body.cache);
  });

  it("counts its hits and the cost they saved in the usage ledger (docs/usage.md)", async () => {
    const own = await runIdentityFlow(running.base, ["prompts:read", "prompts:write", "runs:write", "runs:read"]);
    const id = (await publishedPrompt(own)).id;
    for (let i = 0; i < 3; i++) expect((await run("ttl=60", {}, own, id)).status).toBe(201);
    let totals: Record<string, number> = {};
    for (let tries = 0; tries < 100 && totals.runs !== 3; tries++) {
      if (tries > 0) await new Promise((r) => setTimeout(r, 100));
      const u = await call(running.base, "GET", `/api/usage?organizationId=${own.organizationId}`, {
        token: own.token,
      });
      expect(u.status).toBe(200);
      totals = u.body.totals;
    }
    expect(totals).toMatchObject({ runs: 3, cacheHits: 2 });
    expect(totals.costUsd).toBeCloseTo(COST, 12);
    expect(totals.savedCostUsd).toBeCloseTo(2 * COST, 12);
  });

  it("misses on other variables, another version, another organization; without the header or with no-store it is left alone", async () => {
    const variables = { person: `Alan ${Date.now()}` };
    expect((await run("ttl=60", { variables })).headers.get("kiln-cache-status")).toBe("miss");
    stub.reset();
    expect((await run("ttl=60", { variables: { person: "someone else" } })).body.cache.status).toBe("miss");
    // The same text, another prompt (another version) in the same organization.
    const twin = await publishedPrompt(flow);
    expect((await run("ttl=60", { variables }, flow, twin.id)).body.cache.status).toBe("miss");
    // The same prompt text in another organization: never its entry.
    const other = await runIdentityFlow(running.base, ["prompts:read", "prompts:write", "runs:write", "runs:read"]);
    const theirs = await publishedPrompt(other);
    const elsewhere = await run("ttl=60", { variables }, other, theirs.id);
    expect(elsewhere.body.cache.status).toBe("miss");
    expect(stub.requests).toHaveLength(3);

    const plain = await run(undefined, { variables });
    expect(plain.headers.get("kiln-cache-status")).toBeNull();
    expect(plain.body.cache).toBeUndefined();
    const noStore = await run("no-store", { variables });
    expect(noStore.headers.get("kiln-cache-status")).toBeNull();
    expect(stub.requests).toHaveLength(5);
    // Still there for a request that asks.
    expect((await run("ttl=60", { variables })).body.cache.status).toBe("hit");
    expect(stub.requests).toHaveLength(5);
  });

  it("misses once the TTL has passed, and when the entry is older than the request's TTL", async () => {
    const short = { person: `Edsger ${Date.now()}` };
    const long = { person: `Tony ${Date.now()}` };
    expect((await run("ttl=1", { variables: short })).body.cache.status).toBe("miss");
    expect((await run("ttl=1", { variables: short })).body.cache.status).toBe("hit");
    expect((await run("ttl=60", { variables: long })).body.cache.status).toBe("miss");
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    stub.reset();
    expect((await run("ttl=1", { variables: short })).body.cache.status).toBe("miss");
    // Kept 60 s, but this request takes answers at most 1 s old.
    expect((await run("ttl=1", { variables: long })).body.cache.status).toBe("miss");
    expect(stub.requests).toHaveLength(2);
    // The answer just made is young enough for anyone.
    expect((await run("ttl=60", { variables: long })).body.cache.status).toBe("hit");
    expect(stub.requests).toHaveLength(2);
  });

  it("never keeps a failed run", async () => {
    stub.reset();
    const variables = { person: `Barbara ${Date.now()}` };
    stub.script(stubReply.error(400, { message: "bad request upstream" }));
    const failed = await run("ttl=60", { variables });
    expect(failed.body).toMatchObject({ status: "failed", cache: { status: "miss" } });
    const next = await run("ttl=60", { variables });
    expect(next.status).toBe(201);
    expect(next.body.cache.status).toBe("miss");
    expect(stub.requests).toHaveLength(2);
  });

  it("refuses a bad Kiln-Cache header with a 400 naming it, running nothing", async () => {
    stub.reset();
    for (const value of ["ttl=0", "ttl=604801", "ttl=abc", "max-age=5", "ttl=5, no-store"]) {
      const refused = await run(value);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "invalid_argument", details: [{ field: "Kiln-Cache" }] });
    }
    expect(stub.requests).toHaveLength(0);
  });

  it("replays a cached answer as a stream, with the events of a live one", async () => {
    stub.reset();
    const variables = { person: `Ken ${Date.now()}` };
    stub.script(stubReply.text(LONG, { usage: { prompt_tokens: 10, completion_tokens: 5 } }));
    const stream = async () => {
      const res = await fetch(`${running.base}/api/prompts/${promptId}/run/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${flow.token}`, "content-type": "application/json", "kiln-cache": "ttl=60" },
        body: JSON.stringify({ organizationId: flow.organizationId, variables }),
      });
      const text = await res.text();
      const events = text
        .split("\n\n")
        .filter((e) => e.startsWith("data: "))
        .map((e) => JSON.parse(e.slice(6)));
      return { status: res.headers.get("kiln-cache-status"), events };
    };
    const live = await stream();
    expect(live.status).toBe("miss");
    const cached = await stream();
    expect(cached.status).toBe("hit");
    expect(stub.requests).toHaveLength(1);
    expect(cached.events[0]).toMatchObject({ type: "start", runId: expect.stringMatching(/^run_/) });
    const texts = cached.events.filter((e) => e.type === "text");
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.map((e) => e.delta).join("")).toBe(LONG);
    const done = cached.events.at(-1);
    expect(done.type).toBe("done");
    expect(done.run).toMatchObject({ output: { text: LONG }, estimatedCostUsd: 0, cache: { status: "hit" } });
    expect(new Set(cached.events.map((e) => e.type))).toEqual(new Set(live.events.map((e) => e.type)));
  });

  it("caches /v1/chat/completions through the openai package: whole and streamed, other parameters miss", async () => {
    stub.reset();
    const openai = new OpenAI({ apiKey: flow.apiKey, baseURL: `${running.base}/v1`, maxRetries: 0 });
    const model = `kiln/${promptId}`;
    const content = `Hello ${Date.now()}`;
    const ask = (temperature: number, headers: Record<string, string> = { "Kiln-Cache": "ttl=60" }) =>
      openai.chat.completions
        .create({ model, messages: [{ role: "user", content }], temperature }, { headers })
        .withResponse();
    const first = await ask(0.2);
    expect(first.response.headers.get("kiln-cache-status")).toBe("miss");
    const second = await ask(0.2);
    expect(second.response.headers.get("kiln-cache-status")).toBe("hit");
    expect(second.data.choices[0]?.message.content).toBe(first.data.choices[0]?.message.content);
    expect(stub.requests).toHaveLength(1);
    // Another temperature is another answer.
    expect((await ask(0.3)).response.headers.get("kiln-cache-status")).toBe("miss");
    expect(stub.requests).toHaveLength(2);

    const { data: chunks, response } = await openai.chat.completions
      .create(
        { model, messages: [{ role: "user", content }], temperature: 0.2, stream: true },
        {
          headers: { "Kiln-Cache": "ttl=60" },
        },
      )
      .withResponse();
    expect(response.headers.get("kiln-cache-status")).toBe("hit");
    let streamed = "";
    for await (const chunk of chunks) streamed += chunk.choices[0]?.delta.content ?? "";
    expect(streamed).toBe(first.data.choices[0]?.message.content);
    expect(stub.requests).toHaveLength(2);

    const refused: Loose = await ask(0.2, { "Kiln-Cache": "ttl=forever" }).catch((e) => e);
    expect(refused.status).toBe(400);
    expect(refused.error).toMatchObject({ type: "invalid_request_error", param: "Kiln-Cache" });
  });

  it("caches /v1/responses and /v1/messages with the same header", async () => {
    stub.reset();
    const model = `kiln/${promptId}`;
    const text = `Hi ${Date.now()}`;
    const post = (path: string, body: Loose) =>
      fetch(`${running.base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json", "kiln-cache": "ttl=60" },
        body: JSON.stringify(body),
      });
    const requests: [string, Loose][] = [
      ["/v1/responses", { model, input: text }],
      ["/v1/messages", { model, max_tokens: 100, messages: [{ role: "user", content: text }] }],
    ];
    for (const [path, body] of requests) {
      const first = await post(path, body);
      expect(first.status).toBe(200);
      expect(first.headers.get("kiln-cache-status")).toBe("miss");
      const second = await post(path, body);
      expect(second.headers.get("kiln-cache-status")).toBe("hit");
      const streamed = await post(path, { ...body, stream: true });
      expect(streamed.headers.get("kiln-cache-status")).toBe("hit");
      expect(await streamed.text()).toContain("answer ");
    }
    // One model call per route: every other answer came from the cache.
    expect(stub.requests).toHaveLength(2);
  });
});
