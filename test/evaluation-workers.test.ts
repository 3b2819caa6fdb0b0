/**
 * Evaluation workers share one JetStream work queue (docs/architecture.md "Processes and contracts"): two worker
 * processes (the evaluation service's own and a worker-only `kiln evaluation-worker`) take the
 * items of one evaluation run (20 cases × 2 targets) against one FerretDB and one nats-server with
 * the rest of the distributed platform; the worker-only one is killed with SIGKILL while it holds
 * items, and the run still completes with exactly one result per case and target. Each item is
 * made slow by a model on an OpenAI-compatible stub that answers after 200 ms, and one model call
 * in ten is answered 429 with a Retry-After (the execution service makes no retries of its own
 * here): those items' runs are stored as failed and the workers run them again after the wait.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type OpenAIStub, type ReceivedRequest, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient, type EvaluationRun, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Distributed, type Replica, startDistributed } from "./support/distributed.js";
import { twoVersionSkill } from "./support/evaluation-fixture.js";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const CASES = 20;
const LATENCY_MS = 200;
/** Items one worker process takes at a time: with two processes, more than this in flight means both hold some. */
const CONCURRENCY = 4;

/** One model call in this many is rate-limited. */
const RATE_LIMIT_EVERY = 10;
let calls = 0;

/** The stub answers like local/echo (the rendered system prompt, as text), or 429. */
function echoSystemPrompt(request: ReceivedRequest) {
  if (++calls % RATE_LIMIT_EVERY === 0) return stubReply.rateLimited({ retryAfterMs: 150 });
  const messages: { role?: string; content?: unknown }[] = request.body?.messages ?? [];
  const system = messages.find((m) => m.role === "system");
  return stubReply.text(typeof system?.content === "string" ? system.content : "");
}

describe("evaluation workers in two processes", () => {
  let stub: OpenAIStub;
  let kiln: Distributed;
  let second: Replica;
  let api: TestClient;
  let flow: FlowResult;
  let skillId: string;
  let versions: { draft: string; published: string };

  beforeAll(async () => {
    stub = await startOpenAIStub({ latencyMs: LATENCY_MS, respond: echoSystemPrompt });
    const workerEnv = {
      EVALUATION_WORKER_CONCURRENCY: String(CONCURRENCY),
      // A dead worker's items come back after this long.
      EVALUATION_ACK_WAIT_MS: "3000",
    };
    kiln = await startDistributed({
      mongoUrl: inject("mongoUrl"),
      natsUrl: inject("natsUrl"),
      envOf: {
        execution: {
          PROVIDER_MAX_RETRIES: "0",
          OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
            {
              id: "stub",
              baseUrl: stub.baseUrl,
              models: [{ model: "slow", inputPerMTokUsd: 0, outputPerMTokUsd: 0 }],
            },
          ]),
        },
        evaluation: workerEnv,
      },
    });
    // The evaluation service's own process runs workers; `kiln evaluation-worker` runs only workers.
    second = await kiln.startReplica("evaluation", {
      command: "evaluation-worker",
      env: workerEnv,
      readyLog: "evaluation workers started",
    });
    api = createTestClient(kiln.gatewayUrl);
    flow = await runIdentityFlow(kiln.gatewayUrl, ["skills:read", "evaluations:read", "evaluations:write"]);
    const skill = await twoVersionSkill(api, flow, {
      name: "Slow greeter",
      model: "stub/slow",
      published: "Hello {{name}}",
      draft: "Hi {{name}}",
    });
    skillId = skill.skillId;
    versions = { draft: skill.draftVersionId, published: skill.publishedVersionId };
    await api.createEvaluationCases(
      flow.apiKey,
      undefined,
      skillId,
      Array.from({ length: CASES }, (_, i) => ({
        name: `case ${i}`,
        input: { name: `Person${i}` },
        assertions: [{ type: "contains" as const, value: `Hello Person${i}` }],
      })),
    );
  }, 180_000);

  afterAll(async () => {
    await kiln?.stop();
    await stub?.close();
  });

  it("completes a run with one result per case and target after a worker is killed mid-run", async () => {
    stub.reset();
    const started = await api.startEvaluation(flow.apiKey, undefined, skillId);

    // Both processes hold items once more are in flight than one process takes.
    const deadline = Date.now() + 20_000;
    while (stub.inFlight() <= CONCURRENCY) {
      if (Date.now() > deadline) throw new Error(`never more than ${stub.maxInFlight()} model calls at once`);
      await sleep(10);
    }
    const killed = new Promise<NodeJS.Signals | null>((resolve) => second.process.once("exit", (_, s) => resolve(s)));
    second.process.kill("SIGKILL");
    expect(await killed).toBe("SIGKILL");
    const midway = await api.getEvaluation(flow.apiKey, skillId, started.id);
    expect(midway.status).toBe("running");
    expect(midway.results.length).toBeLessThan(CASES);

    const done: EvaluationRun = await api.waitForEvaluation(flow.apiKey, skillId, started.id, { timeoutMs: 45_000 });
    expect(done.status, JSON.stringify(done.summary)).toBe("completed");
    expect(done.targets.map((t) => [t.label, t.skillVersionId]).sort()).toEqual([
      ["draft", versions.draft],
      ["published", versions.published],
    ]);
    expect(done.results).toHaveLength(CASES);
    const pairs = done.results.flatMap((r) => Object.keys(r.byTarget).map((label) => `${r.caseId}:${label}`));
    expect(pairs).toHaveLength(CASES * 2);
    expect(new Set(pairs).size).toBe(CASES * 2);
    expect(new Set(done.results.map((r) => r.caseId)).size).toBe(CASES);

    // Every item ran to its end: the published version greets with "Hello", the draft does not.
    for (const r of done.results) {
      expect(r.byTarget.published).toMatchObject({ outcome: "pass", runId: expect.stringMatching(/^srun_/) });
      expect(r.byTarget.draft).toMatchObject({ outcome: "fail", runId: expect.stringMatching(/^srun_/) });
      expect(r.change).toBe("regressed");
    }
    const runIds = done.results.flatMap((r) => [r.byTarget.published?.runId, r.byTarget.draft?.runId]);
    expect(new Set(runIds).size).toBe(CASES * 2);
    expect(done.summary?.byTarget.published).toMatchObject({ passed: CASES, failed: 0, errored: 0, passRate: 1 });
    expect(done.summary?.byTarget.draft).toMatchObject({ passed: 0, failed: CASES, errored: 0, passRate: 0 });
    expect(done.summary?.changes).toEqual({
      fixed: 0,
      regressed: CASES,
      outputChanged: 0,
      unchanged: 0,
      stillFailing: 0,
      flaky: 0,
    });
    // Each item reached the model at least once, a rate-limited one again after the wait; a killed
    // worker's items may have reached it twice.
    const limited = stub.requests.length - Math.floor(stub.requests.length / RATE_LIMIT_EVERY);
    expect(Math.floor(stub.requests.length / RATE_LIMIT_EVERY)).toBeGreaterThanOrEqual(3);
    expect(limited).toBeGreaterThanOrEqual(CASES * 2);
    expect(stub.maxInFlight()).toBeGreaterThan(CONCURRENCY);

    // The stored runs behind the results are the model's answers.
    const sample = done.results[7]?.byTarget.published;
    const run = await api.get<{ output: { text: string }; model: string }>(`/api/skill-runs/${sample?.runId}`, {
      token: flow.token,
    });
    expect(run.status, run.text).toBe(200);
    expect(run.body).toMatchObject({ model: "stub/slow", output: { text: sample?.output?.text } });
  }, 90_000);
});
