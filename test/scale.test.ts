/**
 * The distributed mode under scale (docs/deploy.md): two replicas each of the execution and the
 * evaluation services, as processes, against one FerretDB and one nats-server.
 * - Load is shared: each execution replica calls its own OpenAI-compatible stub (same model name),
 *   so each stub counts the runs its replica executed; evaluation replicas each take at most
 *   CONCURRENCY items at once, so more model calls in flight than that means both hold items.
 * - Every run.completed reaches each of two durable consumers exactly once, and every evaluation
 *   result exists once.
 * - SIGTERM to an execution replica under load: every request is answered (the gateway's calls go
 *   to the other replica), every accepted run is stored once and none stays "running"; async agent
 *   runs the stopped replica still held end failed with `unavailable`, or succeeded.
 * - SIGTERM to an evaluation worker holding items: they go back to the queue at once (nak), far
 *   sooner than the ack wait would bring them back.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Bus } from "@kiln/kit/bus";
import { createNatsBus } from "@kiln/kit/bus/nats";
import type { Store } from "@kiln/kit/store";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { type OpenAIStub, type ReceivedRequest, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Distributed, startDistributed } from "./support/distributed.js";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

const CONCURRENCY = 2;
/** Long enough that the work queue's own redelivery could not explain a quick finish. */
const ACK_WAIT_MS = 30_000;
const GRACE_MS = 5_000;

/** Answers like local/echo (the rendered system prompt); a prompt saying SLOW takes 8 s. */
function respond(request: ReceivedRequest) {
  const messages: { role?: string; content?: unknown }[] = request.body?.messages ?? [];
  const system = messages.find((m) => m.role === "system");
  const text = typeof system?.content === "string" ? system.content : "";
  return { ...stubReply.text(text), delayMs: text.includes("SLOW") ? 8_000 : 0 };
}

const providersFor = (stub: OpenAIStub) =>
  JSON.stringify([
    { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "slow", inputPerMTokUsd: 0, outputPerMTokUsd: 0 }] },
  ]);

interface RunDoc {
  _id: string;
  kind: string;
  promptId: string;
  status: string;
  organizationId: string;
  error: { code: string } | null;
}

describe("two replicas of execution and evaluation", () => {
  let stubs: [OpenAIStub, OpenAIStub];
  let kiln: Distributed;
  let api: TestClient;
  let flow: FlowResult;
  let bus: Bus;
  let executionStore: Store;
  let promptId: string;

  /** `count` cases of a greeting skill: input `<prefix>i`, the answer must contain `Hello <prefix>i`. */
  const createGreetingCases = (skillId: string, count: number, prefix: string) =>
    api.createEvaluationCases(
      flow.apiKey,
      undefined,
      skillId,
      Array.from({ length: count }, (_, i) => ({
        name: `case ${i}`,
        input: { name: `${prefix}${i}` },
        assertions: [{ type: "contains" as const, value: `Hello ${prefix}${i}` }],
      })),
    );
  /** run ids seen by each of two durable consumers of RUNS, with repeats. */
  const seen: Record<"audit-a" | "audit-b", string[]> = { "audit-a": [], "audit-b": [] };

  const runsOfOrg = () => executionStore.collection<RunDoc>("runs").find({ organizationId: flow.organizationId });
  const inFlight = () => stubs[0].inFlight() + stubs[1].inFlight();
  const runPrompt = (name: string) =>
    api.post<{ id: string; status: string }>(
      `/api/prompts/${promptId}/run`,
      { organizationId: flow.organizationId, variables: { name } },
      { token: flow.token },
    );

  beforeAll(async () => {
    stubs = await Promise.all([
      startOpenAIStub({ latencyMs: 100, respond }),
      startOpenAIStub({ latencyMs: 100, respond }),
    ]);
    const workers = {
      EVALUATION_WORKER_CONCURRENCY: String(CONCURRENCY),
      EVALUATION_ACK_WAIT_MS: String(ACK_WAIT_MS),
    };
    kiln = await startDistributed({
      mongoUrl: inject("mongoUrl"),
      natsUrl: inject("natsUrl"),
      env: { SHUTDOWN_GRACE_MS: String(GRACE_MS) },
      // A process that fails to start says why in the test's output.
      logLevel: "fatal",
      envOf: { execution: { OPENAI_COMPATIBLE_PROVIDERS: providersFor(stubs[0]) }, evaluation: workers },
      replicasOf: { execution: [{ OPENAI_COMPATIBLE_PROVIDERS: providersFor(stubs[1]) }], evaluation: [workers] },
    });
    api = createTestClient(kiln.gatewayUrl);
    flow = await runIdentityFlow(kiln.gatewayUrl, [
      "prompts:read",
      "runs:write",
      "skills:read",
      "evaluations:read",
      "evaluations:write",
    ]);
    const prompt = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      systemPrompt: "Hello {{name}}",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      model: "stub/slow",
    });
    promptId = prompt.prompt.id;
    executionStore = createMongoStore({
      url: inject("mongoUrl"),
      database: kiln.databases.execution,
      appName: "scale-test",
    });
    // Two more consumers of run.completed, as two services each with its own durable would be.
    bus = await createNatsBus({ url: inject("natsUrl"), prefix: kiln.natsPrefix, name: "scale-test" });
    for (const durable of ["audit-a", "audit-b"] as const) {
      await bus.ensureConsumer({ stream: "RUNS", durable });
      bus.consume({ stream: "RUNS", durable }, async (msg) => {
        const event = msg.json<{ runId: string; organizationId: string }>();
        if (event.organizationId === flow.organizationId) seen[durable].push(event.runId);
      });
    }
  }, 180_000);

  afterAll(async () => {
    await bus?.close();
    await executionStore?.close();
    await kiln?.stop();
    await Promise.all((stubs ?? []).map((s) => s.close()));
  });

  it("shares runs and evaluation items between replicas; each event once per consumer, each result once", async () => {
    const RUNS = 40;
    const answers: number[] = [];
    for (let i = 0; i < RUNS; i += 8) {
      const batch = await Promise.all(Array.from({ length: 8 }, (_, j) => runPrompt(`P${i + j}`)));
      answers.push(...batch.map((r) => r.status));
    }
    expect(answers).toEqual(Array(RUNS).fill(201));
    // Each replica ran some; together exactly one model call per run.
    const [a, b] = stubs.map((s) => s.requests.length);
    expect(a).toBeGreaterThan(RUNS / 4);
    expect(b).toBeGreaterThan(RUNS / 4);
    expect((a ?? 0) + (b ?? 0)).toBe(RUNS);

    // An evaluation: items of both targets, taken by both evaluation replicas.
    const CASES = 8;
    const skill = await api.createSkill(flow.token, flow.organizationId, { name: "Greeter" });
    await api.replaceSkillPrompts(flow.token, skill.draftVersionId ?? "", [{ promptId }]);
    await api.publishSkill(flow.token, skill.id);
    const draft = await api.post<{ id: string }>(`/api/skills/${skill.id}/versions`, {}, { token: flow.token });
    expect(draft.status, draft.text).toBe(201);
    await api.replaceSkillPrompts(flow.token, draft.body.id, [{ promptId }]);
    await createGreetingCases(skill.id, CASES, "Person");
    for (const s of stubs) s.setLatency(600);
    const started = await api.startEvaluation(flow.apiKey, undefined, skill.id);
    let maxInFlight = 0;
    const watch = (async () => {
      for (let t = 0; t < 400 && maxInFlight <= CONCURRENCY; t++) {
        maxInFlight = Math.max(maxInFlight, inFlight());
        await sleep(20);
      }
    })();
    const done = await api.waitForEvaluation(flow.apiKey, skill.id, started.id, { timeoutMs: 45_000 });
    await watch;
    for (const s of stubs) s.setLatency(100);
    expect(maxInFlight).toBeGreaterThan(CONCURRENCY);
    expect(done.status).toBe("completed");
    expect(done.results).toHaveLength(CASES);
    const pairs = done.results.flatMap((r) => Object.keys(r.byTarget).map((label) => `${r.caseId}:${label}`));
    expect(new Set(pairs).size).toBe(CASES * 2);
    expect(pairs).toHaveLength(CASES * 2);
    const evalRunIds = done.results.flatMap((r) => Object.values(r.byTarget).map((t) => t?.runId));
    expect(new Set(evalRunIds).size).toBe(CASES * 2);

    // Every stored run, each exactly once in each consumer's stream of events.
    const stored = await runsOfOrg();
    expect(stored.length).toBe(RUNS + CASES * 2);
    expect(stored.every((r) => r.status === "succeeded")).toBe(true);
    const ids = stored.map((r) => r._id).sort();
    for (const durable of ["audit-a", "audit-b"] as const) {
      await expect.poll(() => seen[durable].length, { timeout: 15_000 }).toBeGreaterThanOrEqual(ids.length);
      expect([...seen[durable]].sort(), durable).toEqual(ids);
    }
  }, 120_000);

  it("loses no request and no run when an execution replica gets SIGTERM under load", async () => {
    const victim = kiln.instances.execution[1];
    if (!victim) throw new Error("no second execution replica");
    const before = new Set((await runsOfOrg()).map((r) => r._id));

    // Async agent runs whose one step takes 8 s: longer than the 5 s grace period.
    const step = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      systemPrompt: "SLOW note about {{topic}}",
      variablesSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
      model: "stub/slow",
    });
    const agent = await api.post<{ id: string; draftVersionId: string }>(
      "/api/agents",
      { organizationId: flow.organizationId, name: "Slow note" },
      { token: flow.token },
    );
    expect(agent.status, agent.text).toBe(201);
    const workflow = {
      inputSchema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
      entry: "note",
      steps: [{ id: "note", type: "prompt", ref: { promptId: step.prompt.id }, input: { topic: "{{inputs.topic}}" } }],
      output: "{{steps.note.output}}",
    };
    const saved = await api.request("PUT", `/api/agent-versions/${agent.body.draftVersionId}/workflow`, {
      token: flow.token,
      body: { workflow },
    });
    expect(saved.status, saved.text).toBe(200);
    expect((await api.post(`/api/agents/${agent.body.id}/publish`, {}, { token: flow.token })).status).toBe(200);
    const slowOn = (stub: OpenAIStub) => stub.requests.filter((r) => JSON.stringify(r.body).includes("SLOW")).length;
    const asyncRuns = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api.post<{ id: string; status: string }>(
          `/api/agents/${agent.body.id}/run`,
          { organizationId: flow.organizationId, inputs: { topic: `t${i}` }, mode: "async" },
          { token: flow.token },
        ),
      ),
    );
    expect(asyncRuns.map((r) => [r.status, r.body.status])).toEqual(Array(6).fill([202, "running"]));
    // Every one of them has reached its replica's model, and the replica about to stop holds some.
    await expect.poll(() => slowOn(stubs[0]) + slowOn(stubs[1]), { timeout: 15_000 }).toBe(6);
    const heldByVictim = slowOn(stubs[1]);
    expect(heldByVictim, "the balancer gave the second replica none of 6 async runs").toBeGreaterThan(0);

    // Load: 6 clients in a loop; SIGTERM to one replica 1.5 s in; 1.5 s more after it exited.
    const statuses: number[] = [];
    const timings: { atMs: number; status: number }[] = [];
    let stop = false;
    const t0 = Date.now();
    const loops = Array.from({ length: 6 }, async (_, c) => {
      for (let i = 0; !stop; i++) {
        const res = await runPrompt(`L${c}-${i}`);
        statuses.push(res.status);
        timings.push({ atMs: Date.now() - t0, status: res.status });
      }
    });
    await sleep(1_500);
    const exited = new Promise<number | null>((resolve) => victim.process.once("exit", (code) => resolve(code)));
    const killedAt = Date.now();
    victim.process.kill("SIGTERM");
    const code = await exited;
    const drainMs = Date.now() - killedAt;
    await sleep(1_500);
    stop = true;
    await Promise.all(loops);
    const afterMs = Date.now() - t0;

    expect(code).toBe(0);
    expect(drainMs).toBeLessThan(GRACE_MS + 1_000);
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s !== 201)).toEqual([]);
    const killedMs = killedAt - t0;
    const rate = (from: number, to: number) =>
      Math.round((timings.filter((t) => t.atMs > from && t.atMs <= to).length * 1000) / (to - from));
    console.info(
      `execution SIGTERM: ${statuses.length} requests, all 201; drain ${drainMs} ms; ` +
        `${rate(0, killedMs)} runs/s with 2 replicas, ${rate(killedMs + drainMs, afterMs)} runs/s with 1 ` +
        `(stub latency 100 ms, 6 clients)`,
    );

    // Every accepted run is stored once; the async runs all end, the stopped replica's as failed.
    const finals = await Promise.all(
      asyncRuns.map(async (r) => {
        for (;;) {
          const got = await api.get<{ status: string; error?: { code: string } }>(`/api/agent-runs/${r.body.id}`, {
            token: flow.token,
          });
          if (got.body.status !== "running") return got.body;
          await sleep(250);
        }
      }),
    );
    const interrupted = finals.filter((f) => f.status === "failed");
    expect(interrupted.length).toBe(heldByVictim);
    expect(interrupted.map((f) => f.error?.code)).toEqual(Array(heldByVictim).fill("unavailable"));
    expect(finals.filter((f) => f.status === "succeeded").length).toBe(6 - heldByVictim);
    const stored = (await runsOfOrg()).filter((r) => !before.has(r._id));
    const loadRuns = stored.filter((r) => r.kind === "prompt" && r.promptId === promptId);
    expect(loadRuns.length).toBe(statuses.length);
    expect(stored.filter((r) => r.status === "running")).toEqual([]);
  }, 90_000);

  it("hands an evaluation worker's items back to the queue at once on SIGTERM", async () => {
    const CASES = 6;
    const worker = await kiln.startReplica("evaluation", {
      command: "evaluation-worker",
      env: {
        EVALUATION_WORKER_CONCURRENCY: String(CONCURRENCY),
        EVALUATION_ACK_WAIT_MS: String(ACK_WAIT_MS),
        // No time to finish: what it holds goes back at once.
        SHUTDOWN_GRACE_MS: "1000",
      },
      readyLog: "evaluation workers started",
    });
    const skill = await api.createSkill(flow.token, flow.organizationId, { name: "Slow greeter" });
    await api.replaceSkillPrompts(flow.token, skill.draftVersionId ?? "", [{ promptId }]);
    await api.publishSkill(flow.token, skill.id);
    await createGreetingCases(skill.id, CASES, "Q");
    for (const s of stubs) s.setLatency(2_000);
    try {
      const started = await api.startEvaluation(flow.apiKey, undefined, skill.id);
      // Two evaluation replicas hold at most 2 × CONCURRENCY: more in flight means the worker holds some.
      await expect.poll(inFlight, { timeout: 10_000, interval: 20 }).toBeGreaterThan(2 * CONCURRENCY);
      const exited = new Promise<number | null>((resolve) => worker.process.once("exit", (code) => resolve(code)));
      const killedAt = Date.now();
      worker.process.kill("SIGTERM");
      expect(await exited).toBe(0);
      const exitMs = Date.now() - killedAt;
      const done = await api.waitForEvaluation(flow.apiKey, skill.id, started.id, { timeoutMs: 25_000 });
      const completedMs = Date.now() - killedAt;
      console.info(`evaluation worker SIGTERM: exited after ${exitMs} ms; run completed ${completedMs} ms after it`);
      expect(exitMs).toBeLessThan(2_500);
      // Redelivery by ack wait would take 30 s: the items came back by nak.
      expect(completedMs).toBeLessThan(ACK_WAIT_MS / 2);
      expect(done.status).toBe("completed");
      expect(done.results).toHaveLength(CASES);
      for (const r of done.results) expect(r.byTarget.published).toMatchObject({ outcome: "pass" });
    } finally {
      for (const s of stubs) s.setLatency(100);
    }
  }, 60_000);
});
