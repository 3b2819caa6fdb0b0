/**
 * The usage ledger survives a crash (docs/usage.md "How it is kept"), in the
 * distributed mode on a real FerretDB and nats-server: runs of a priced model go on, eight at a
 * time, while the only execution process is killed with SIGKILL (its ledger's runs held in memory,
 * flushes perhaps halfway) and started again; callers retry what answered 503 with their
 * Idempotency-Key. Once the redelivered run events are counted, the ledger equals the sum over the
 * stored runs: every run counted once (none lost, none twice), every token class, cost to the cent.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Distributed, startDistributed } from "./support/distributed.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const USAGE = { prompt_tokens: 1200, completion_tokens: 150, prompt_tokens_details: { cached_tokens: 1000 } };
const RUNS = 48;
const LANES = 8;

describe("the usage ledger when execution is killed under load", () => {
  let stub: OpenAIStub;
  let kiln: Distributed;
  let flow: FlowResult;
  let promptId: string;

  beforeAll(async () => {
    stub = await startOpenAIStub({ latencyMs: 40, respond: () => stubReply.text("ok", { usage: USAGE }) });
    kiln = await startDistributed({
      mongoUrl: inject("mongoUrl"),
      natsUrl: inject("natsUrl"),
      envOf: {
        execution: {
          OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
            {
              id: "stub",
              baseUrl: stub.baseUrl,
              models: [{ model: "priced", inputPerMTokUsd: 3, outputPerMTokUsd: 15, cachedInputPerMTokUsd: 0.3 }],
            },
          ]),
          PROVIDER_MAX_RETRIES: "0",
        },
      },
    });
    flow = await runIdentityFlow(kiln.gatewayUrl, ["prompts:read", "runs:write", "runs:read"]);
    const { prompt } = await createTestClient(kiln.gatewayUrl).createPublishedPrompt(flow.token, flow.organizationId, {
      systemPrompt: "Answer {{q}}",
      variablesSchema: { type: "object", properties: { q: { type: "string" } } },
      model: "stub/priced",
    });
    promptId = prompt.id;
  }, 240_000);

  afterAll(async () => {
    await kiln?.stop();
    await stub?.close();
  });

  /** One run, retried with its key until it is stored (a 503 or a reset while execution is away). */
  async function runOnce(): Promise<string> {
    const key = randomUUID();
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${kiln.gatewayUrl}/api/prompts/${promptId}/run`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${flow.apiKey}`,
            "content-type": "application/json",
            "idempotency-key": key,
          },
          body: JSON.stringify({ organizationId: flow.organizationId, variables: { q: key } }),
          signal: AbortSignal.timeout(30_000),
        });
        const body = (await res.json()) as { id?: string };
        if (res.status === 201 && body.id) return body.id;
        if (![409, 503].includes(res.status)) throw new Error(`answered ${res.status}: ${JSON.stringify(body)}`);
      } catch (e) {
        if (e instanceof Error && e.message.startsWith("answered")) throw e;
      }
      if (attempt > 120) throw new Error("a run was never stored");
      await sleep(500);
    }
  }

  it("counts every stored run once after a kill -9 mid-load: runs, tokens and cost equal the stored runs'", async () => {
    const acknowledged: string[] = [];
    let started = 0;
    const lanes = Array.from({ length: LANES }, async () => {
      while (started < RUNS) {
        started++;
        acknowledged.push(await runOnce());
      }
    });
    // Killed once some runs are counted and others are held or in flight.
    while (acknowledged.length < RUNS / 3) await sleep(50);
    await kiln.kill("execution");
    await sleep(1_000);
    await kiln.restart("execution");
    await Promise.all(lanes);
    expect(new Set(acknowledged).size).toBe(RUNS);

    // The stored runs, read back.
    const stored: { id: string; usage: { inputTokens: number; outputTokens: number }; estimatedCostUsd: number }[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: typeof stored; nextCursor: string | null } } = await call(
        kiln.gatewayUrl,
        "GET",
        `/api/runs?organizationId=${flow.organizationId}&limit=100${cursor ? `&cursor=${cursor}` : ""}`,
        { token: flow.token },
      );
      stored.push(...page.body.data);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(stored.map((r) => r.id).sort()).toEqual([...acknowledged].sort());

    // Redelivered events (the consumer's 30 s ack wait) are counted once the process is back.
    const url = `/api/usage?organizationId=${flow.organizationId}`;
    let totals = { runs: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      totals = (await call(kiln.gatewayUrl, "GET", url, { token: flow.token })).body.totals;
      if (totals.runs >= RUNS) break;
      await sleep(500);
    }
    // Nothing more arrives: a run counted twice would show here.
    await sleep(2_000);
    totals = (await call(kiln.gatewayUrl, "GET", url, { token: flow.token })).body.totals;
    const sum = (f: (r: (typeof stored)[number]) => number) => stored.reduce((s, r) => s + f(r), 0);
    expect(totals.runs).toBe(RUNS);
    expect(totals.inputTokens).toBe(sum((r) => r.usage.inputTokens));
    expect(totals.outputTokens).toBe(sum((r) => r.usage.outputTokens));
    expect(Math.round(totals.costUsd * 100)).toBe(Math.round(sum((r) => r.estimatedCostUsd) * 100));
    expect(totals.costUsd).toBeCloseTo(
      sum((r) => r.estimatedCostUsd),
      9,
    );
  }, 240_000);
});
