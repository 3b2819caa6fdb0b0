import { LABEL_NAME } from "@kiln/contracts/labels";
import { failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage, type Page } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES } from "./access.js";
import type { ReportResult } from "./domain/build-report.js";
import { type Comparison, compareReports } from "./domain/comparison.js";
import type { EvaluationDeps } from "./evaluation-deps.js";
import { type DatasetReader, repeatsOf, storeAndPublish } from "./run-start.js";
import { type EvaluationRunDoc, type TargetDoc, type TargetLabel, updateProgress } from "./store/evaluation-store.js";
import { resultsOf } from "./store/stored-report.js";

const LABELS: readonly TargetLabel[] = ["draft", "published"];
/** A target: draft, published, or a label's name (docs/labels.md). */
const isTarget = (t: string) => LABEL_NAME.test(t);
const TARGET_ISSUE = 'must be "draft", "published" or a label of the skill';

/** A run as read back: while it is not completed, `results` are those stored so far. */
export interface RunView {
  run: EvaluationRunDoc;
  results: ReportResult[] | null;
}

/** Which runs a read is about: a skill's (`skillId`), or a prompt's (`promptId`, docs/api.md "Prompt evaluations"). */
export interface RunSubject {
  organizationId: string;
  skillId: string;
  promptId?: string;
}

export interface StartRunInput {
  organizationId: string;
  skillId: string;
  targets: string[];
  caseIds: string[];
  repeats?: number;
  datasetId?: string;
  datasetVersion?: number;
}

/** Evaluation runs: started here, executed by the workers (work/evaluation-workers.ts). */
export function createRuns(deps: EvaluationDeps, datasets?: DatasetReader) {
  const c = deps.collections;

  /** The cases a run executes: the skill's (all, or those named), or a dataset's items at one version. */
  async function casesOf(
    scope: { skillId: string; organizationId: string },
    input: StartRunInput,
  ): Promise<{ caseIds: string[]; dataset?: { datasetId: string; datasetVersion: number } }> {
    if (input.datasetId) {
      if (input.caseIds.length > 0)
        throw invalidArgument("caseIds and datasetId exclude each other", [
          { field: "caseIds", issue: "must not be given with datasetId" },
        ]);
      if (!datasets) throw new Error("this process reads no datasets");
      const read = await datasets.itemIdsAt(scope.organizationId, input.datasetId, input.datasetVersion ?? 0);
      return { caseIds: read.itemIds, dataset: { datasetId: input.datasetId, datasetVersion: read.version } };
    }
    if (input.datasetVersion)
      throw invalidArgument("datasetVersion needs datasetId", [
        { field: "datasetVersion", issue: "must be given with datasetId" },
      ]);
    if (input.caseIds.length === 0) {
      const all = await c.cases.find(scope, { sort: { _id: 1 }, projection: { _id: 1 } });
      if (all.length === 0) throw failedPrecondition("the skill has no evaluation cases");
      return { caseIds: all.map((k) => k._id) };
    }
    const wanted = [...new Set(input.caseIds)];
    const found = await c.cases.find({ ...scope, _id: { $in: wanted } }, { projection: { _id: 1 } });
    const known = new Set(found.map((k) => k._id));
    const issues = input.caseIds.flatMap((id, i) =>
      known.has(id) ? [] : [{ field: `caseIds[${i}]`, issue: "is not an evaluation case of this skill" }],
    );
    if (issues.length > 0) throw invalidArgument("unknown evaluation cases", issues);
    // Ids sort by creation time: the report lists cases in the order they were created.
    return { caseIds: wanted.sort() };
  }

  /**
   * The targets to run and their versions: those named (each must exist; draft and published
   * first, then labels in the order named), else whichever of draft and published exist.
   */
  async function targetsOf(
    organizationId: string,
    skillId: string,
    requested: string[],
    versions: Record<string, string | undefined>,
  ): Promise<{ label: TargetLabel; versionId: string }[]> {
    const issues = requested.flatMap((t, i) => (isTarget(t) ? [] : [{ field: `targets[${i}]`, issue: TARGET_ISSUE }]));
    if (new Set(requested).size !== requested.length)
      issues.push({ field: "targets", issue: "must not repeat a target" });
    if (issues.length > 0) throw invalidArgument("invalid targets", issues);
    if (requested.length === 0) {
      const existing = LABELS.filter((l) => versions[l] !== undefined);
      if (existing.length === 0) throw failedPrecondition("the skill has neither a draft nor a published version");
      return existing.map((label) => ({ label, versionId: versions[label] as string }));
    }
    const named = [...LABELS.filter((l) => requested.includes(l)), ...requested.filter((t) => !LABELS.includes(t))];
    // Labels are read only when one is named.
    const labels = named.some((t) => !LABELS.includes(t))
      ? await deps.access.skillLabels(organizationId, skillId)
      : new Map();
    const versionOf = (t: string) => (LABELS.includes(t) ? versions[t] : labels.get(t));
    const missing = named.filter((t) => versionOf(t) === undefined);
    if (missing.length > 0) {
      const what = (t: string) => (LABELS.includes(t) ? `no ${t} version` : `no label ${t}`);
      throw failedPrecondition(
        `the skill has ${missing.map(what).join(" and ")}`,
        missing.map((t) => ({ field: `targets[${requested.indexOf(t)}]`, issue: `the skill has ${what(t)}` })),
      );
    }
    return named.map((label) => ({ label, versionId: versionOf(label) as string }));
  }

  // Named, not `this`: the RPC table passes these methods unbound.
  const runs = {
    /** Stores the run and publishes its work (storeAndPublish). */
    async startRun(principal: Principal, input: StartRunInput): Promise<EvaluationRunDoc> {
      const repeats = repeatsOf(input.repeats);
      const skill = await deps.access.skill(principal, input.organizationId, input.skillId, SCOPES.evaluationsWrite);
      const versions: Record<string, string | undefined> = {
        draft: skill.draftVersionId,
        published: skill.publishedVersionId,
      };
      const named = await targetsOf(skill.organizationId, skill.id, input.targets, versions);

      const scope = { skillId: skill.id, organizationId: skill.organizationId };
      const { caseIds, dataset } = await casesOf(scope, input);

      const targets: TargetDoc[] = [];
      for (const { label, versionId } of named) {
        const version = await deps.access.skillVersion(skill.organizationId, skill.id, versionId);
        targets.push({
          label,
          skillVersionId: versionId,
          inputSchemaJson: version.content?.inputSchema?.json ?? "",
          outputSchemaJson: version.content?.outputSchema?.json ?? "",
        });
      }

      return storeAndPublish(deps, {
        _id: newId("evr"),
        skillId: skill.id,
        organizationId: skill.organizationId,
        status: "queued",
        targets,
        caseIdsJson: JSON.stringify(caseIds),
        ...dataset,
        repeats,
        itemCount: caseIds.length * targets.length * repeats,
        workPublished: false,
        resultsJson: "[]",
        summaryJson: "{}",
        contractValidityJson: "{}",
        createdAt: deps.now(),
        completedAt: null,
      });
    },

    /** The skill's (or prompt's) runs, newest first, without their per-case results (`resultsJson` is not read). */
    async listRuns(
      principal: Principal,
      input: RunSubject & { limit: number; cursor: string },
    ): Promise<Page<EvaluationRunDoc>> {
      const read = SCOPES.evaluationsRead;
      const scope = input.promptId
        ? await deps.access
            .prompt(principal, input.organizationId, input.promptId, read)
            .then((p) => ({ promptId: p.id, organizationId: p.organizationId }))
        : await deps.access
            .skill(principal, input.organizationId, input.skillId, read)
            .then((s) => ({ skillId: s.id, organizationId: s.organizationId }));
      const page = await findPage(c.runs, scope, { ...input, projection: { resultsJson: 0, caseIdsJson: 0 } });
      return { ...page, items: page.items.map((r) => ({ ...r, resultsJson: "[]" })) };
    },

    async getRun(principal: Principal, input: RunSubject & { evaluationRunId: string }): Promise<RunView> {
      if (input.evaluationRunId === "") {
        throw invalidArgument("evaluationRunId is required", [{ field: "evaluationRunId", issue: "is required" }]);
      }
      const run = await c.runs.findOne({ _id: input.evaluationRunId });
      const mismatch =
        !run ||
        (input.skillId !== "" && run.skillId !== input.skillId) ||
        (!!input.promptId && run.promptId !== input.promptId) ||
        (input.organizationId !== "" && run.organizationId !== input.organizationId);
      if (mismatch) throw notFound("evaluation run");
      await deps.access.onResource(principal, run.organizationId, SCOPES.evaluationsRead, "evaluation run");
      const reported = run.status === "completed" || run.status === "cancelled";
      return { run, results: reported ? null : await deps.completion.partialResults(run) };
    },

    /**
     * Stops what has not started: the workers drop the run's remaining items, the report covers the
     * results that finished (and any that finish after), and says it was cancelled. Cancelling a
     * cancelled run changes nothing; a completed or failed one cannot be cancelled (409).
     */
    async cancelRun(principal: Principal, input: RunSubject & { evaluationRunId: string }): Promise<RunView> {
      const { run } = await runs.getRun(principal, input);
      await deps.access.onResource(principal, run.organizationId, SCOPES.evaluationsWrite, "evaluation run");
      if (run.status === "completed" || run.status === "failed") {
        throw failedPrecondition(
          `the evaluation run has already ${run.status === "completed" ? "completed" : "failed"}`,
        );
      }
      if (run.status !== "cancelled") {
        await c.runs.updateOne(
          { _id: run._id, status: { $in: ["queued", "running"] } },
          { $set: { status: "cancelled", completedAt: deps.now() } },
        );
        await updateProgress(c.progress, run._id, { $set: { cancelled: true } });
        await deps.completion.completeIfDone(run);
      }
      return runs.getRun(principal, input);
    },

    /**
     * Two reported runs of the skill, case by case on one target: base and head verdicts and pass
     * rates, the change from base to head, and the same counts and sentence as within one run.
     */
    async compareRuns(
      principal: Principal,
      input: RunSubject & {
        baseEvaluationRunId: string;
        headEvaluationRunId: string;
        target: string;
      },
    ): Promise<Comparison> {
      const read = async (field: "base" | "head", evaluationRunId: string) => {
        if (evaluationRunId === "") throw invalidArgument(`${field} is required`, [{ field, issue: "is required" }]);
        const { run } = await runs.getRun(principal, { ...input, evaluationRunId });
        if (run.status !== "completed" && run.status !== "cancelled") {
          throw failedPrecondition(`the ${field} evaluation run has not completed`, [
            { field, issue: `is ${run.status}, not completed` },
          ]);
        }
        return run;
      };
      const base = await read("base", input.baseEvaluationRunId);
      const head = await read("head", input.headEvaluationRunId);
      const common = base.targets.map((t) => t.label).filter((l) => head.targets.some((t) => t.label === l));
      // A prompt evaluation's targets are keys ("v2@openai/gpt-4o-mini"): found in both runs or not.
      if (input.target !== "" && !input.promptId && !isTarget(input.target)) {
        throw invalidArgument(`target ${TARGET_ISSUE}`, [{ field: "target", issue: TARGET_ISSUE }]);
      }
      const label = input.target === "" ? common[0] : input.target;
      if (!label || !common.includes(label)) {
        throw failedPrecondition(
          input.target === "" ? "the two runs share no target" : `both runs must have evaluated ${input.target}`,
          input.target === "" ? [] : [{ field: "target", issue: "is not a target of both runs" }],
        );
      }
      return compareReports(
        { run: base, label, results: resultsOf(base.resultsJson) },
        { run: head, label, results: resultsOf(head.resultsJson) },
      );
    },
  };
  return runs;
}

export type Runs = ReturnType<typeof createRuns>;
