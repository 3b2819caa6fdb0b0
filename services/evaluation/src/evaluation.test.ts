import type { Bus } from "@kiln/kit/bus";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { DomainError } from "@kiln/kit/errors";
import { afterEach, describe, expect, it } from "vitest";
import {
  createTestEvaluation,
  eventually,
  ORG_A,
  ORG_B,
  principals,
  rejectionOf,
  skillWithBoth,
  TEXT_SCHEMA,
} from "../test/test-evaluation.js";
import type { Report } from "./domain/build-report.js";
import { comparedTargets } from "./domain/report.js";
import type { EvaluationWorkers } from "./work/evaluation-workers.js";
import { createWorkRelay, EVALUATIONS_STREAM } from "./work/work-queue.js";

const { userA, userB, keyA, keyAReadOnly, keyASkillsOnly, keyB } = principals;
const SKILL = "skl_both";
const started: EvaluationWorkers[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.stop(100)));
});

async function startWorkers(w: EvaluationWorkers) {
  started.push(w);
  await w.start();
  return w;
}

const cityCases = (...cities: string[]) =>
  cities.map((city) => ({
    name: city,
    inputJson: JSON.stringify({ city }),
    assertions: [{ type: "contains", value: city }],
  }));

describe("evaluation cases", () => {
  it("stores a valid batch and lists it newest first with a cursor", async () => {
    const t = await createTestEvaluation();
    const created = await t.cases.createCases(userA, {
      organizationId: ORG_A,
      skillId: SKILL,
      cases: cityCases("Oslo", "Rome", "Lima"),
    });
    expect(created.map((c) => [c.name, c.skillId, c.organizationId])).toEqual([
      ["Oslo", SKILL, ORG_A],
      ["Rome", SKILL, ORG_A],
      ["Lima", SKILL, ORG_A],
    ]);
    const first = await t.cases.listCases(keyAReadOnly, { organizationId: "", skillId: SKILL, limit: 2, cursor: "" });
    expect(first.items.map((c) => c.name)).toEqual(["Lima", "Rome"]);
    const second = await t.cases.listCases(keyAReadOnly, {
      organizationId: "",
      skillId: SKILL,
      limit: 2,
      cursor: first.nextCursor,
    });
    expect(second.items.map((c) => c.name)).toEqual(["Oslo"]);
    expect(second.nextCursor).toBe("");
  });

  it("refuses a batch with one bad case and stores none of it", async () => {
    const t = await createTestEvaluation();
    const e = await rejectionOf(
      t.cases.createCases(userA, {
        organizationId: ORG_A,
        skillId: SKILL,
        cases: [
          ...cityCases("Oslo"),
          { inputJson: '{"city":"Rome"}', assertions: [{ type: "regex", pattern: "([" }] },
          { inputJson: "[]" },
        ],
      }),
    );
    expect(e.kind).toBe("invalid_argument");
    expect(e.details.map((d) => d.field)).toEqual(["cases[1].assertions[0].pattern", "cases[2].input"]);
    expect(await t.collections.cases.countDocuments({})).toBe(0);
  });

  it("answers not_found for a skill that does not exist or belongs to another organization", async () => {
    const t = await createTestEvaluation();
    const missing = await rejectionOf(
      t.cases.createCases(userA, { organizationId: ORG_A, skillId: "skl_nope", cases: cityCases("x") }),
    );
    expect(missing.kind).toBe("not_found");
    for (const [principal, organizationId] of [
      [userB, ORG_B],
      [userB, ""],
      [keyB, ""],
    ] as const) {
      const e = await rejectionOf(
        t.cases.createCases(principal, { organizationId, skillId: SKILL, cases: cityCases("x") }),
      );
      expect(e.kind).toBe("not_found");
    }
    expect(await t.collections.cases.countDocuments({})).toBe(0);
  });

  it("needs evaluations:write to create and evaluations:read to list", async () => {
    const t = await createTestEvaluation();
    const write = await rejectionOf(
      t.cases.createCases(keyAReadOnly, { organizationId: "", skillId: SKILL, cases: cityCases("x") }),
    );
    expect(write.kind).toBe("permission_denied");
    const read = await rejectionOf(
      t.cases.listCases(keyASkillsOnly, { organizationId: "", skillId: SKILL, limit: 0, cursor: "" }),
    );
    expect(read.kind).toBe("permission_denied");
    expect(await t.collections.cases.countDocuments({})).toBe(0);
  });
});

describe("starting an evaluation run", () => {
  it("refuses a target the skill does not have with failed_precondition", async () => {
    const t = await createTestEvaluation({
      skills: [
        { id: "skl_draft", organizationId: ORG_A, draft: { id: "sv_d", inputSchema: {}, outputSchema: TEXT_SCHEMA } },
      ],
    });
    await t.cases.createCases(userA, { organizationId: ORG_A, skillId: "skl_draft", cases: cityCases("Oslo") });
    const e = await rejectionOf(
      t.runs.startRun(userA, { organizationId: ORG_A, skillId: "skl_draft", targets: ["published"], caseIds: [] }),
    );
    expect(e.kind).toBe("failed_precondition");
    expect(e.details).toEqual([{ field: "targets[0]", issue: "the skill has no published version" }]);
    const noLabel = await rejectionOf(
      t.runs.startRun(userA, {
        organizationId: ORG_A,
        skillId: "skl_draft",
        targets: ["draft", "staging"],
        caseIds: [],
      }),
    );
    expect(noLabel.kind).toBe("failed_precondition");
    expect(noLabel.details).toEqual([{ field: "targets[1]", issue: "the skill has no label staging" }]);
    const bad = await rejectionOf(
      t.runs.startRun(userA, { organizationId: ORG_A, skillId: "skl_draft", targets: ["Staging!"], caseIds: [] }),
    );
    expect(bad.kind).toBe("invalid_argument");
    const twice = await rejectionOf(
      t.runs.startRun(userA, { organizationId: ORG_A, skillId: "skl_draft", targets: ["draft", "draft"], caseIds: [] }),
    );
    expect(twice.kind).toBe("invalid_argument");
    expect(await t.collections.runs.countDocuments({})).toBe(0);
    // Without targets: whichever exist.
    const run = await t.runs.startRun(userA, { organizationId: ORG_A, skillId: "skl_draft", targets: [], caseIds: [] });
    expect(run.targets.map((x) => [x.label, x.skillVersionId])).toEqual([["draft", "sv_d"]]);
  });

  it("takes labels as targets: production against staging compares production (before) with staging (after)", async () => {
    const skill = { ...skillWithBoth("skl_labels"), labels: {} as Record<string, string> };
    skill.labels = { staging: skill.draft?.id ?? "" };
    const t = await createTestEvaluation({ skills: [skill] });
    await t.cases.createCases(userA, { organizationId: ORG_A, skillId: "skl_labels", cases: cityCases("Oslo") });
    const run = await t.runs.startRun(userA, {
      organizationId: ORG_A,
      skillId: "skl_labels",
      targets: ["staging", "production"],
      caseIds: [],
    });
    expect(run.targets.map((x) => [x.label, x.skillVersionId])).toEqual([
      ["staging", skill.draft?.id],
      ["production", skill.published?.id],
    ]);
    expect(comparedTargets(run.targets)).toMatchObject({
      baseline: { label: "production" },
      candidate: { label: "staging" },
    });
  });

  it("refuses a skill without cases, and case ids of another skill", async () => {
    const t = await createTestEvaluation({ skills: [skillWithBoth(), skillWithBoth("skl_other")] });
    const none = await rejectionOf(
      t.runs.startRun(userA, { organizationId: ORG_A, skillId: SKILL, targets: [], caseIds: [] }),
    );
    expect(none.kind).toBe("failed_precondition");
    const [other] = await t.cases.createCases(userA, {
      organizationId: ORG_A,
      skillId: "skl_other",
      cases: cityCases("x"),
    });
    const e = await rejectionOf(
      t.runs.startRun(userA, { organizationId: ORG_A, skillId: SKILL, targets: [], caseIds: [other?._id ?? ""] }),
    );
    expect(e.kind).toBe("invalid_argument");
    expect(e.details).toEqual([{ field: "caseIds[0]", issue: "is not an evaluation case of this skill" }]);
  });

  it("needs evaluations:write (an API key with evaluations:read only is permission_denied)", async () => {
    const t = await createTestEvaluation();
    await t.cases.createCases(keyA, { organizationId: "", skillId: SKILL, cases: cityCases("Oslo") });
    const e = await rejectionOf(
      t.runs.startRun(keyAReadOnly, { organizationId: "", skillId: SKILL, targets: [], caseIds: [] }),
    );
    expect(e.kind).toBe("permission_denied");
    expect(await t.collections.runs.countDocuments({})).toBe(0);
    // evaluations:write alone is enough: the catalog is asked as the evaluation service.
    const run = await t.runs.startRun(keyA, { organizationId: "", skillId: SKILL, targets: [], caseIds: [] });
    expect(run.status).toBe("queued");
  });

  it("queues the run, publishes one work message per case × target, and marks it published", async () => {
    const t = await createTestEvaluation();
    await t.cases.createCases(userA, { organizationId: ORG_A, skillId: SKILL, cases: cityCases("Oslo", "Rome") });
    const run = await t.runs.startRun(userA, { organizationId: ORG_A, skillId: SKILL, targets: [], caseIds: [] });
    expect(run).toMatchObject({ status: "queued", itemCount: 4 });
    expect(run.targets.map((x) => x.label)).toEqual(["draft", "published"]);
    expect((await t.bus.streamInfo(EVALUATIONS_STREAM.name)).messages).toBe(4);
    expect((await t.collections.runs.findOne({ _id: run._id }))?.workPublished).toBe(true);
  });
});

describe("evaluation workers", () => {
  const reportOf = async (t: Awaited<ReturnType<typeof createTestEvaluation>>, id: string) => {
    const view = await t.runs.getRun(userA, { organizationId: ORG_A, skillId: SKILL, evaluationRunId: id });
    return {
      run: view.run,
      results: JSON.parse(view.run.resultsJson) as Report["results"],
      summary: JSON.parse(view.run.summaryJson) as Report["summary"],
      contractValidity: JSON.parse(view.run.contractValidityJson) as Report["contractValidity"],
    };
  };

  it("runs every case on both targets to a completed run with exactly one result each", async () => {
    // The draft fixes Rome and breaks Lima.
    const t = await createTestEvaluation({
      behaviour: (input, versionId) => {
        const city = String(input.city);
        if (versionId.endsWith("_draft")) return { text: city === "Lima" ? "hola" : `hello ${city}` };
        return { text: city === "Rome" ? "ciao" : `hello ${city}` };
      },
    });
    await t.cases.createCases(userA, {
      organizationId: ORG_A,
      skillId: SKILL,
      cases: cityCases("Oslo", "Rome", "Lima"),
    });
    const run = await t.runs.startRun(userA, { organizationId: ORG_A, skillId: SKILL, targets: [], caseIds: [] });
    await startWorkers(t.workers());
    const done = await eventually(async () => {
      const r = await reportOf(t, run._id);
      return r.run.status === "completed" && r;
    });
    expect(await t.collections.results.countDocuments({ evaluationRunId: run._id })).toBe(6);
    expect(t.execution.calls).toHaveLength(6);
    expect(new Set(t.execution.calls.map((c) => c.idempotencyKey)).size).toBe(6);
    expect(done.results.map((r) => r.change)).toEqual(["unchanged", "fixed", "regressed"]);
    expect(done.results[0]?.byTarget.draft).toMatchObject({
      outcome: "pass",
      output: { text: "hello Oslo" },
      contractValid: true,
      latencyMs: 10,
      assertions: [{ type: "contains", passed: true }],
    });
    expect(done.summary.byTarget.draft).toMatchObject({ passed: 2, failed: 1, errored: 0 });
    expect(done.summary.changes).toEqual({
      fixed: 1,
      regressed: 1,
      outputChanged: 0,
      unchanged: 1,
      stillFailing: 0,
      flaky: 0,
    });
    expect(done.contractValidity).toEqual({ valid: true, violations: [], breakingChanges: [] });
    expect(done.run.completedAt).toBeInstanceOf(Date);
    expect((await t.bus.streamInfo(EVALUATIONS_STREAM.name)).messages).toBe(0);
  });

  it("records an item that can never run as an error, and still completes the run", async () => {
    const t = await createTestEvaluation({
      behaviour: (input) =>
        input.city === "Nowhere" ? { failed: { code: "no_output", message: "nothing" } } : { text: "hello" },
    });
    await t.cases.createCases(userA, { organizationId: ORG_A, skillId: SKILL, cases: cityCases("Oslo", "Nowhere") });
    const run = await t.runs.startRun(userA, {
      organizationId: ORG_A,
      skillId: SKILL,
      targets: ["draft"],
      caseIds: [],
    });
    t.execution.beforeRun = (call) => {
      if (call.inputJson.includes("Oslo")) throw new DomainError("not_found", "skill version not found");
    };
    await startWorkers(t.workers());
    const done = await eventually(async () => {
      const r = await reportOf(t, run._id);
      return r.run.status === "completed" && r;
    });
    expect(done.results.map((r) => r.byTarget.draft?.outcome)).toEqual(["error", "error"]);
    expect(done.results[0]?.byTarget.draft).toMatchObject({ runId: null, error: { code: "not_found" } });
    expect(done.results[1]?.byTarget.draft).toMatchObject({ output: null, contractValid: null });
    expect(done.summary.byTarget.draft?.errored).toBe(2);
  });

  it("keeps one result when a worker dies after RunSkill: the redelivery replays the same run", async () => {
    const t = await createTestEvaluation();
    await t.cases.createCases(userA, { organizationId: ORG_A, skillId: SKILL, cases: cityCases("Oslo", "Rome") });
    const run = await t.runs.startRun(userA, { organizationId: ORG_A, skillId: SKILL, targets: [], caseIds: [] });
    let died = false;
    const dying = {
      ...t.execution,
      runSkill: async (...args: Parameters<typeof t.execution.runSkill>) => {
        const res = await t.execution.runSkill(...args);
        if (!died) {
          died = true;
          throw new Error("worker died mid-case");
        }
        return res;
      },
    };
    await startWorkers(t.workers({ execution: dying }));
    await eventually(async () => (await t.collections.runs.findOne({ _id: run._id }))?.status === "completed");
    expect(died).toBe(true);
    const results = await t.collections.results.find({ evaluationRunId: run._id });
    expect(results).toHaveLength(4);
    expect(new Set(results.map((r) => r._id)).size).toBe(4);
    // 4 items + 1 redelivery, and the redelivery got the first call's run back.
    expect(t.execution.calls).toHaveLength(5);
    const runIds = results.map((r) => r.runId);
    expect(new Set(runIds).size).toBe(4);
    expect(results.every((r) => r.outcome === "pass")).toBe(true);
  });

  it("retries an item while the execution service is unavailable", async () => {
    const t = await createTestEvaluation();
    await t.cases.createCases(userA, { organizationId: ORG_A, skillId: SKILL, cases: cityCases("Oslo") });
    const run = await t.runs.startRun(userA, {
      organizationId: ORG_A,
      skillId: SKILL,
      targets: ["published"],
      caseIds: [],
    });
    let failures = 2;
    t.execution.beforeRun = () => {
      if (failures-- > 0) throw new DomainError("unavailable", "execution is down");
    };
    await startWorkers(t.workers());
    await eventually(async () => (await t.collections.runs.findOne({ _id: run._id }))?.status === "completed");
    const [result] = await t.collections.results.find({ evaluationRunId: run._id });
    expect(result?.outcome).toBe("pass");
    expect(t.execution.calls).toHaveLength(3);
  });

  it("shares one batch between two worker instances: each item handled once", async () => {
    const t = await createTestEvaluation();
    await t.cases.createCases(userA, {
      organizationId: ORG_A,
      skillId: SKILL,
      cases: cityCases("a", "b", "c", "d", "e", "f"),
    });
    const run = await t.runs.startRun(userA, { organizationId: ORG_A, skillId: SKILL, targets: [], caseIds: [] });
    await startWorkers(t.workers());
    await startWorkers(t.workers());
    await eventually(async () => (await t.collections.runs.findOne({ _id: run._id }))?.status === "completed");
    expect(await t.collections.results.countDocuments({ evaluationRunId: run._id })).toBe(12);
    expect(t.execution.calls).toHaveLength(12);
  });

  it("publishes the work of a run started while the bus refused it once the relay runs", async () => {
    const memory = createMemoryBus();
    let down = true;
    const flaky: Bus = {
      ...memory,
      publish: (...args) => (down ? Promise.reject(new Error("bus is down")) : memory.publish(...args)),
    };
    const t = await createTestEvaluation({ bus: flaky });
    await t.cases.createCases(userA, { organizationId: ORG_A, skillId: SKILL, cases: cityCases("Oslo", "Rome") });
    const run = await t.runs.startRun(userA, { organizationId: ORG_A, skillId: SKILL, targets: [], caseIds: [] });
    expect(run.status).toBe("queued");
    expect((await t.collections.runs.findOne({ _id: run._id }))?.workPublished).toBe(false);
    expect((await memory.streamInfo(EVALUATIONS_STREAM.name)).messages).toBe(0);

    const relay = createWorkRelay(t.collections.runs, flaky, (await import("../test/test-evaluation.js")).silentLogger);
    expect(await relay.relayPending()).toBe(0);
    down = false;
    expect(await relay.relayPending()).toBe(1);
    expect(await relay.relayPending()).toBe(0);
    expect((await memory.streamInfo(EVALUATIONS_STREAM.name)).messages).toBe(4);
    await startWorkers(t.workers());
    await eventually(async () => (await t.collections.runs.findOne({ _id: run._id }))?.status === "completed");
    expect(await t.collections.results.countDocuments({ evaluationRunId: run._id })).toBe(4);

    // Published again on a new bus (as a restarted embedded platform does with its unfinished
    // runs): every item finds its result and runs nothing.
    const calls = t.execution.calls.length;
    const restarted = createMemoryBus();
    await restarted.ensureStream(EVALUATIONS_STREAM);
    await t.collections.runs.updateOne({ _id: run._id }, { $set: { workPublished: false } });
    const again = createWorkRelay(
      t.collections.runs,
      restarted,
      (await import("../test/test-evaluation.js")).silentLogger,
    );
    expect(await again.relayPending()).toBe(1);
    expect((await restarted.streamInfo(EVALUATIONS_STREAM.name)).messages).toBe(4);
    await startWorkers(t.workers({ bus: restarted }));
    await eventually(async () => (await restarted.streamInfo(EVALUATIONS_STREAM.name)).messages === 0);
    expect(t.execution.calls).toHaveLength(calls);
    expect(await t.collections.results.countDocuments({ evaluationRunId: run._id })).toBe(4);
  });
});

describe("reading an evaluation run", () => {
  it("shows results stored so far while running, and hides runs of another skill or organization", async () => {
    const t = await createTestEvaluation({ skills: [skillWithBoth(), skillWithBoth("skl_other")] });
    await t.cases.createCases(userA, { organizationId: ORG_A, skillId: SKILL, cases: cityCases("Oslo") });
    const run = await t.runs.startRun(userA, { organizationId: ORG_A, skillId: SKILL, targets: [], caseIds: [] });
    const queued = await t.runs.getRun(keyAReadOnly, { organizationId: "", skillId: SKILL, evaluationRunId: run._id });
    expect(queued.run.status).toBe("queued");
    expect(queued.results).toEqual([]);
    for (const [principal, skillId, organizationId] of [
      [userA, "skl_other", ORG_A],
      [userA, SKILL, ORG_B],
      [keyB, SKILL, ""],
      [userB, SKILL, ""],
    ] as const) {
      const e = await rejectionOf(t.runs.getRun(principal, { organizationId, skillId, evaluationRunId: run._id }));
      expect(e.kind).toBe("not_found");
    }
    const scope = await rejectionOf(
      t.runs.getRun(keyASkillsOnly, { organizationId: "", skillId: SKILL, evaluationRunId: run._id }),
    );
    expect(scope.kind).toBe("permission_denied");
  });
});
