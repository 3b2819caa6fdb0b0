import { createNatsBus } from "@kiln/kit/bus/nats";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { MongoClient } from "mongodb";
import { afterAll, describe, expect, inject, it } from "vitest";
import { startNatsServer } from "../../../test/support/servers.js";
import { createTestEvaluation, eventually, ORG_A, principals, silentLogger } from "../test/test-evaluation.js";
import { createEvaluationWorkers, type ExecutionClient } from "./work/evaluation-workers.js";
import { EVALUATIONS_STREAM, publishWork } from "./work/work-queue.js";

const url = inject("mongoUrl");
const database = `evaluation_int_${Date.now()}`;
const store = createMongoStore({ url, database, appName: "evaluation-int-test" });

afterAll(async () => {
  await store.close();
  const admin = new MongoClient(url);
  try {
    await admin.db(database).dropDatabase();
  } finally {
    await admin.close();
  }
});

describe("evaluation workers on FerretDB and nats-server", () => {
  // A nats-server of its own: the EVALUATIONS stream and its durable consumer have fixed names, and
  // the end-to-end suites' evaluation service shares the global one (its workers would take ours).
  it("shares one batch between two worker processes: every case × target once, the run completed", async () => {
    const nats = await startNatsServer();
    const busA = await createNatsBus({ url: nats.url, name: "eval-int-a" });
    const busB = await createNatsBus({ url: nats.url, name: "eval-int-b" });
    try {
      const t = await createTestEvaluation({
        store,
        bus: busA,
        behaviour: (input, versionId) => ({
          text: `${versionId.endsWith("_draft") ? "hello" : "hi"} ${String(input.city)}`,
        }),
      });
      const cities = Array.from({ length: 10 }, (_, i) => `city${i}`);
      await t.cases.createCases(principals.userA, {
        organizationId: ORG_A,
        skillId: "skl_both",
        cases: cities.map((city) => ({
          inputJson: JSON.stringify({ city }),
          assertions: [{ type: "regex", pattern: "^hello" }],
        })),
      });
      const run = await t.runs.startRun(principals.userA, {
        organizationId: ORG_A,
        skillId: "skl_both",
        targets: [],
        caseIds: [],
      });
      // Each worker process counts what it ran; a short pause lets both take part.
      const handledBy = { a: 0, b: 0 };
      const executionOf = (who: "a" | "b"): ExecutionClient => ({
        complete: t.execution.complete,
        runPrompt: t.execution.runPrompt,
        runSkill: async (...args: Parameters<ExecutionClient["runSkill"]>) => {
          handledBy[who]++;
          await new Promise((r) => setTimeout(r, 20));
          return t.execution.runSkill(...args);
        },
      });
      const workers = (["a", "b"] as const).map((who) =>
        createEvaluationWorkers({
          bus: who === "a" ? busA : busB,
          store,
          execution: executionOf(who),
          logger: silentLogger,
          concurrency: 2,
          ackWaitMs: 5_000,
          webhooks: false,
        }),
      );
      await Promise.all(workers.map((w) => w.start()));
      try {
        await eventually(
          async () => (await t.collections.runs.findOne({ _id: run._id }))?.status === "completed",
          30_000,
        );
      } finally {
        await Promise.all(workers.map((w) => w.stop(1_000)));
      }
      const results = await t.collections.results.find({ evaluationRunId: run._id });
      expect(results).toHaveLength(20);
      expect(new Set(results.map((r) => r._id)).size).toBe(20);
      expect(handledBy.a + handledBy.b).toBe(20);
      expect(handledBy.a).toBeGreaterThan(0);
      expect(handledBy.b).toBeGreaterThan(0);
      const stored = await t.collections.runs.findOne({ _id: run._id });
      const summary = JSON.parse(stored?.summaryJson ?? "{}");
      expect(summary.byTarget.draft).toMatchObject({ passed: 10, failed: 0 });
      expect(summary.byTarget.published).toMatchObject({ passed: 0, failed: 10 });
      expect(summary.changes).toMatchObject({ fixed: 10 });
      expect(JSON.parse(stored?.resultsJson ?? "[]").map((r: { caseId: string }) => r.caseId)).toEqual(
        JSON.parse(stored?.caseIdsJson ?? "[]"),
      );

      // Publishing the same work again (a relay racing the start) is de-duplicated by the stream.
      if (stored) await publishWork(t.collections.runs, busA, stored);
      expect((await busA.streamInfo(EVALUATIONS_STREAM.name)).messages).toBe(0);
    } finally {
      await busA.close();
      await busB.close();
      await nats.stop({ removeData: true });
    }
  }, 60_000);
});
