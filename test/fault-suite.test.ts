/**
 * The fault suite (docs/operations.md "What happens when a process or server dies"): the
 * distributed platform with two catalog and two execution replicas, on a FerretDB and a
 * nats-server of its own (behind relays that keep their addresses across a restart), its runs
 * calling a model stub that takes 150 ms, so that runs are in flight at every fault. Callers keep
 * running prompts and asynchronous agent runs, each with an Idempotency-Key, retrying what
 * answered 503, 409 or 429 (or a reset connection) as a client should; meanwhile each process is
 * killed with SIGKILL and started again, FerretDB is stopped for 10 s and nats-server for 3 s.
 * For every fault: the statuses the callers saw (never a 5xx other than 503), every run
 * eventually acknowledged, the recovery time. At the end: the stored runs are the acknowledged
 * ones, every stored run's run.completed was published, and no run is left running.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Bus, Subscription } from "@kiln/kit/bus";
import { createNatsBus } from "@kiln/kit/bus/nats";
import { createPublishedAgent } from "@kiln/testing/agent-fixture";
import { type OpenAIStub, startOpenAIStub } from "@kiln/testing/openai-stub";
import { createTestClient } from "@kiln/testing/test-client";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Distributed, type ServiceName, startDistributed } from "./support/distributed.js";
import { type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { relay } from "./support/relay.js";
import { type RunningServer, startFerretDb, startNatsServer } from "./support/servers.js";

const LANES = 8;
const STUB_LATENCY_MS = 150;
/** How long one logical run may take, retries included, before the suite calls it lost. */
const OP_DEADLINE_MS = 90_000;

const portOf = (url: string) => Number(new URL(url).port);

interface Answer {
  at: number;
  kind: "prompt" | "agent";
  /** How long the attempt took. */
  ms: number;
  /** The HTTP status, or 0 for a connection that failed (reset, refused) before any answer. */
  status: number;
  code?: string;
  message?: string;
}

interface Acked {
  kind: "prompt" | "agent";
  id: string;
}

describe("the distributed platform while each process is killed and each server stopped, under load", () => {
  let ferret: RunningServer;
  let nats: RunningServer;
  let ferretRelay: Awaited<ReturnType<typeof relay>>;
  let natsRelay: Awaited<ReturnType<typeof relay>>;
  let stub: OpenAIStub;
  let kiln: Distributed;
  let flow: FlowResult;
  let promptId: string;
  let agentId: string;
  let bus: Bus;
  let events: Subscription;
  const published = new Set<string>();
  const acked: Acked[] = [];
  const recoveries: {
    fault: string;
    failures: number;
    worstGapMs: number;
    afterRestoreMs: number;
    /** Attempts that ended without an answer (a reset, or the caller's 30 s timeout), and the slowest. */
    unanswered: number;
    slowestUnansweredMs: number;
  }[] = [];

  beforeAll(async () => {
    [ferret, nats] = await Promise.all([startFerretDb(), startNatsServer()]);
    [ferretRelay, natsRelay] = await Promise.all([relay(portOf(ferret.url)), relay(portOf(nats.url))]);
    stub = await startOpenAIStub({ latencyMs: STUB_LATENCY_MS, recordRequests: false });
    const natsUrl = `nats://127.0.0.1:${natsRelay.port}`;
    kiln = await startDistributed({
      // An operation waits 1.5 s (not the driver's 30 s) for the store to come back.
      mongoUrl: `mongodb://127.0.0.1:${ferretRelay.port}/?directConnection=true&serverSelectionTimeoutMS=1500`,
      natsUrl,
      replicasOf: { catalog: [{}], execution: [{}] },
      envOf: {
        execution: {
          OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
            { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "slow" }] },
          ]),
          DEFAULT_MODEL: "stub/slow",
        },
      },
      // Seven processes on a shared two-core machine.
      readyTimeoutMs: 240_000,
    });
    flow = await runIdentityFlow(kiln.gatewayUrl, ["prompts:read", "agents:read", "runs:read", "runs:write"]);
    const api = createTestClient(kiln.gatewayUrl);
    const { prompt } = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      systemPrompt: "Answer {{question}}",
      variablesSchema: { type: "object", properties: { question: { type: "string" } } },
    });
    promptId = prompt.id;
    agentId = (await createPublishedAgent(api, flow.token, flow.organizationId)).agentId;
    // A consumer of the run events of its own, as any subscriber would have.
    bus = await createNatsBus({ url: natsUrl, prefix: kiln.natsPrefix, name: "fault-suite" });
    const consumer = { stream: "RUNS", durable: "fault_suite" };
    await bus.ensureConsumer(consumer);
    events = bus.consume(consumer, async (msg) => {
      published.add((JSON.parse(msg.string()) as { runId: string }).runId);
      await msg.ack();
    });
  }, 400_000);

  afterAll(async () => {
    console.info(
      `fault suite recoveries:\n${recoveries
        .map(
          (r) =>
            `  ${r.fault}: ${r.failures} answers other than success (${r.unanswered} unanswered, the slowest after ${r.slowestUnansweredMs} ms), worst gap ${r.worstGapMs} ms, last failure ${r.afterRestoreMs} ms after the restore`,
        )
        .join("\n")}`,
    );
    await events?.stop();
    await bus?.close();
    await kiln?.stop();
    await Promise.all([ferretRelay?.close(), natsRelay?.close()]);
    await Promise.all([ferret?.stop({ removeData: true }), nats?.stop({ removeData: true })]);
    await stub?.close();
  });

  /**
   * Where each run whose run.completed never arrived stands: its record, whether its outbox intent
   * is still pending, and what the suite's consumer and the stream hold, to tell a relay that gave
   * up from an event the bus took and lost.
   */
  async function whereLost(missing: string[]): Promise<string> {
    if (missing.length === 0) return "";
    const client = new MongoClient(`mongodb://127.0.0.1:${ferretRelay.port}/?directConnection=true`);
    try {
      const db = client.db(kiln.databases.execution);
      const lines = [];
      for (const id of missing) {
        const run = await db
          .collection<{ _id: string; status: string; kind: string; createdAt: Date; completedAt?: Date }>("runs")
          .findOne({ _id: id });
        const intent = await db.collection<{ _id: string; createdAt: Date }>("run_event_outbox").findOne({ _id: id });
        lines.push(
          `${id}: run ${run ? JSON.stringify({ status: run.status, kind: run.kind, createdAt: run.createdAt, completedAt: run.completedAt }) : "not stored"}, intent ${intent ? `pending since ${intent.createdAt}` : "cleared"}`,
        );
      }
      const info = await bus.streamInfo("RUNS").catch((e: unknown) => String(e));
      lines.push(`RUNS stream: ${JSON.stringify(info)}`);
      return lines.join("\n");
    } finally {
      await client.close();
    }
  }

  /** One logical run, retried with its Idempotency-Key until it is acknowledged; every answer recorded. */
  async function runOnce(kind: Acked["kind"], answers: Answer[]): Promise<void> {
    const key = randomUUID();
    const [path, body] =
      kind === "prompt"
        ? [`/api/prompts/${promptId}/run`, { organizationId: flow.organizationId, variables: { question: key } }]
        : [
            `/api/agents/${agentId}/run`,
            { organizationId: flow.organizationId, inputs: { topic: key, city: "Oslo" }, mode: "async" },
          ];
    const deadline = Date.now() + OP_DEADLINE_MS;
    for (;;) {
      let res: Response | undefined;
      const sent = Date.now();
      try {
        res = await fetch(`${kiln.gatewayUrl}${path}`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${flow.apiKey}`,
            "content-type": "application/json",
            "idempotency-key": key,
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
      } catch {
        answers.push({ at: Date.now(), kind, ms: Date.now() - sent, status: 0 });
      }
      if (res) {
        const text = await res.text();
        const parsed = JSON.parse(text) as { id?: string; error?: { code: string; message: string } };
        answers.push({
          at: Date.now(),
          kind,
          ms: Date.now() - sent,
          status: res.status,
          code: parsed.error?.code,
          message: parsed.error?.message,
        });
        if (res.status === 201 || res.status === 202) {
          acked.push({ kind, id: parsed.id as string });
          return;
        }
        if (![409, 429, 503].includes(res.status)) throw new Error(`${path} answered ${res.status}: ${text}`);
      }
      if (Date.now() > deadline) {
        const last = answers.slice(-5).map((a) => `${a.status} ${a.code ?? ""} ${a.message ?? ""}`);
        throw new Error(`${path} not acknowledged within ${OP_DEADLINE_MS} ms; the last answers: ${last.join("; ")}`);
      }
      const retryAfter = Number(res?.headers.get("retry-after") ?? "0");
      await sleep(Math.min(2_000, Math.max(200, retryAfter * 1000)));
    }
  }

  /** Runs keep going on LANES lanes (one in four an asynchronous agent run) while `fault` runs. */
  async function underLoad(fault: () => Promise<number>): Promise<{ answers: Answer[]; restoredAt: number }> {
    const answers: Answer[] = [];
    let done = false;
    const lanes = Array.from({ length: LANES }, async (_, lane) => {
      for (let n = 0; !done; n++) await runOnce((n + lane) % 4 === 0 ? "agent" : "prompt", answers);
    });
    await sleep(1_500);
    const restoredAt = await fault();
    // Load goes on for a while after the restore, to see it served again.
    await sleep(3_000);
    done = true;
    await Promise.all(lanes);
    return { answers, restoredAt };
  }

  function judge(fault: string, { answers, restoredAt }: { answers: Answer[]; restoredAt: number }, allowed: string[]) {
    const kinds = new Set(answers.map((a) => (a.status === 0 ? "reset" : `${a.status}${a.code ? ` ${a.code}` : ""}`)));
    const unexpected = [...kinds].filter((k) => !["201", "202", ...allowed].includes(k));
    const failures = answers.filter((a) => a.status !== 201 && a.status !== 202).sort((a, b) => a.at - b.at);
    const successes = answers.filter((a) => a.status === 201 || a.status === 202).map((a) => a.at);
    let worstGapMs = 0;
    for (let i = 1; i < successes.length; i++)
      worstGapMs = Math.max(worstGapMs, (successes[i] as number) - (successes[i - 1] as number));
    const last = failures.at(-1)?.at;
    recoveries.push({
      fault,
      failures: failures.length,
      worstGapMs,
      afterRestoreMs: last === undefined ? 0 : Math.max(0, last - restoredAt),
      unanswered: failures.filter((a) => a.status === 0).length,
      slowestUnansweredMs: Math.max(0, ...failures.filter((a) => a.status === 0).map((a) => a.ms)),
    });
    const told = failures
      .map((a) => `${a.at - restoredAt} ms ${a.kind} ${a.status} ${a.code ?? ""} after ${a.ms} ms: ${a.message ?? ""}`)
      .join("\n");
    expect(unexpected, `${fault}: answers outside ${allowed.join(", ")}; the failures:\n${told}`).toEqual([]);
    // Served again soon after the restore: no failure later than this.
    expect(
      last === undefined ? 0 : last - restoredAt,
      `${fault}: failures long after the restore:\n${told}`,
    ).toBeLessThan(45_000);
  }

  const killAndRestart =
    (target: ServiceName | "gateway", index = 0) =>
    async () => {
      await kiln.kill(target, index);
      await sleep(2_000);
      await kiln.restart(target, index);
      return Date.now();
    };

  it("kill -9 of an execution replica: 503 for the calls in flight, retries served by the other replica, then both", async () => {
    judge("execution killed", await underLoad(killAndRestart("execution")), [
      "503 unavailable",
      "409 failed_precondition",
    ]);
  }, 240_000);

  it("kill -9 of a catalog replica: runs go on through the other", async () => {
    judge("catalog killed", await underLoad(killAndRestart("catalog")), ["503 unavailable", "409 failed_precondition"]);
  }, 240_000);

  it("kill -9 of identity (its only replica): 503 until it is back", async () => {
    judge("identity killed", await underLoad(killAndRestart("identity")), [
      "503 unavailable",
      "409 failed_precondition",
    ]);
  }, 240_000);

  it("kill -9 of evaluation: runs do not notice", async () => {
    judge("evaluation killed", await underLoad(killAndRestart("evaluation")), []);
  }, 240_000);

  it("kill -9 of the gateway: connections reset, retries answered by the new process", async () => {
    judge("gateway killed", await underLoad(killAndRestart("gateway")), [
      "reset",
      "503 unavailable",
      "409 failed_precondition",
    ]);
  }, 240_000);

  it("FerretDB stopped for 10 s: 503, then served again without a restart", async () => {
    const outcome = await underLoad(async () => {
      await ferret.stop();
      ferretRelay.retarget(portOf(ferret.url));
      await sleep(10_000);
      ferret = await startFerretDb({ dir: ferret.dir });
      ferretRelay.retarget(portOf(ferret.url));
      return Date.now();
    });
    // Every attempt is answered (no reset, no caller's 30 s timeout): 503 while the store is away.
    judge("FerretDB stopped 10 s", outcome, ["503 unavailable", "409 failed_precondition"]);
  }, 240_000);

  it("nats-server stopped for 3 s: runs go on, their events go out later", async () => {
    const outcome = await underLoad(async () => {
      await nats.stop();
      natsRelay.retarget(portOf(nats.url));
      await sleep(3_000);
      nats = await startNatsServer({ dir: nats.dir });
      natsRelay.retarget(portOf(nats.url));
      return Date.now();
    });
    judge("nats-server stopped 3 s", outcome, ["503 unavailable", "409 failed_precondition"]);
  }, 240_000);

  it("lost nothing: stored runs = acknowledged runs, events = stored runs, none left running", async () => {
    const api = createTestClient(kiln.gatewayUrl);
    const list = async (kind: string) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: {
          status: number;
          body: { data: { id: string; status: string; promptId?: string }[]; nextCursor: string | null };
        } = await api.get("/api/runs", {
          token: flow.token,
          query: { organizationId: flow.organizationId, kind, limit: "100", ...(cursor ? { cursor } : {}) },
        });
        expect(page.status).toBe(200);
        // The suite's prompt's runs (the agents' steps are prompt runs of their own prompts).
        ids.push(...page.body.data.filter((r) => kind === "agent" || r.promptId === promptId).map((r) => r.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      return ids.sort();
    };
    const ackedOf = (kind: Acked["kind"]) => [...new Set(acked.filter((a) => a.kind === kind).map((a) => a.id))].sort();
    expect(acked.length).toBeGreaterThan(20);
    // Every acknowledged run is stored, and no other: a retry whose key's claim did not survive the
    // fault (its process killed after storing the run, or the store failing the insert's answer while
    // taking the run) answers the run its first attempt stored (run-keys.ts).
    for (const kind of ["prompt", "agent"] as const) {
      const stored = await list(kind);
      const acknowledged = ackedOf(kind);
      expect(acknowledged.filter((id) => !stored.includes(id))).toEqual([]);
      expect(stored.filter((id) => !acknowledged.includes(id))).toEqual([]);
    }
    // Every asynchronous run ends (its lease runs out at most 15 s after its process died).
    const deadline = Date.now() + 60_000;
    for (;;) {
      const running: { body: { data: unknown[] } } = await api.get("/api/runs", {
        token: flow.token,
        query: { organizationId: flow.organizationId, status: "running", limit: "100" },
      });
      if (running.body.data.length === 0) break;
      if (Date.now() > deadline) throw new Error(`${running.body.data.length} runs still running`);
      await sleep(500);
    }
    const stored = [...ackedOf("prompt"), ...ackedOf("agent")];
    const eventsDeadline = Date.now() + 60_000;
    while (stored.some((id) => !published.has(id)) && Date.now() < eventsDeadline) await sleep(500);
    const missing = stored.filter((id) => !published.has(id));
    expect(missing, await whereLost(missing)).toEqual([]);
  }, 180_000);
});
