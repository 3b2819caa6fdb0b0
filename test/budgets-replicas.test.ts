/**
 * Budgets across two execution replicas (docs/budgets.md "How a budget holds", the bound): each
 * replica keeps its own view of the spend and learns the other's from the usage ledger. Runs alternate
 * between the replicas (the gateway's least-in-flight balancing); once the ledger has counted both
 * replicas' runs and each has read it again, every replica refuses, though neither stored the limit
 * alone; and 64 concurrent callers stop within the documented bound.
 */
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Distributed, startDistributed } from "./support/distributed.js";
import { call, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const USAGE = { prompt_tokens: 1200, completion_tokens: 150 };
const RUN_COST = (1200 * 3 + 150 * 15) / 1e6;
const SCOPES = ["prompts:read", "runs:write", "runs:read"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("budgets across two execution replicas (distributed)", () => {
  let stub: OpenAIStub;
  let kiln: Distributed;

  beforeAll(async () => {
    stub = await startOpenAIStub({ latencyMs: 20, respond: () => stubReply.text("ok", { usage: USAGE }) });
    kiln = await startDistributed({
      mongoUrl: inject("mongoUrl"),
      natsUrl: inject("natsUrl"),
      envOf: {
        execution: {
          OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
            {
              id: "stub",
              baseUrl: stub.baseUrl,
              models: [{ model: "priced", inputPerMTokUsd: 3, outputPerMTokUsd: 15 }],
            },
          ]),
          PROVIDER_MAX_RETRIES: "0",
        },
      },
      replicasOf: { execution: [{}] },
    });
  }, 180_000);

  afterAll(async () => {
    await kiln?.stop();
    await stub?.close();
  });

  async function organization(limitRuns: number) {
    const flow = await runIdentityFlow(kiln.gatewayUrl, SCOPES);
    const p = await createTestClient(kiln.gatewayUrl).createPublishedPrompt(flow.token, flow.organizationId, {
      model: "stub/priced",
      systemPrompt: "Answer.",
    });
    const budget = await call(kiln.gatewayUrl, "POST", "/api/budgets", {
      token: flow.token,
      body: {
        organizationId: flow.organizationId,
        name: "shared cap",
        scope: { type: "organization" },
        limitUsd: limitRuns * RUN_COST,
        period: "day",
        action: "block",
      },
    });
    expect(budget.status).toBe(201);
    // Budgets made through one replica reach the other within 5 s.
    await sleep(5_500);
    return { flow, promptId: p.prompt.id as string };
  }

  const run = (org: { flow: FlowResult; promptId: string }) =>
    call(kiln.gatewayUrl, "POST", `/api/prompts/${org.promptId}/run`, {
      apiKey: org.flow.apiKey,
      body: { organizationId: org.flow.organizationId, variables: {} },
    });

  it("refuses on every replica once the ledger has both replicas' runs, neither having stored the limit", async () => {
    const org = await organization(10);
    // Ten runs, one at a time: the balancing alternates them, about five on each replica.
    for (let i = 0; i < 10; i++) expect((await run(org)).status).toBe(201);
    // The ledger counts them (~500 ms) and each replica reads it again (within a second).
    await sleep(2_500);
    const before = stub.requests.length;
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await run(org)).status);
    expect(statuses).toEqual([429, 429, 429, 429, 429, 429]);
    expect(stub.requests.length).toBe(before);
  }, 120_000);

  it("stops 64 concurrent callers within the bound: the runs in flight and what the other replica stored in the last ~1.5 s", async () => {
    const org = await organization(100);
    const CALLERS = 64;
    const stored: number[] = [];
    let firstRefusal = Number.POSITIVE_INFINITY;
    await Promise.all(
      Array.from({ length: CALLERS }, async () => {
        for (let attempt = 0; attempt < 40; attempt++) {
          const res = await run(org);
          if (res.status === 429) {
            firstRefusal = Math.min(firstRefusal, Date.now());
            return;
          }
          expect(res.status, JSON.stringify(res.body)).toBe(201);
          stored.push(Date.now());
        }
      }),
    );
    expect(firstRefusal).toBeLessThan(Number.POSITIVE_INFINITY);
    // When the line was crossed: the 100th run's answer. What passed after it came within ~1.5 s.
    const sorted = [...stored].sort((a, b) => a - b);
    const crossedAt = sorted[99] as number;
    const late = sorted.filter((t) => t > crossedAt + 2_000).length;
    console.info(
      `budgets across replicas: ${sorted.length} runs stored for a limit of 100, ${late} more than 2 s after the line`,
    );
    expect(sorted.length).toBeGreaterThanOrEqual(100);
    expect(late, `${sorted.length} stored`).toBeLessThanOrEqual(CALLERS);
  }, 120_000);
});
