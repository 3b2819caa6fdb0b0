/**
 * Prompt evaluations (docs/api.md "Prompt evaluations"): a dataset's items run on one or more
 * versions of a prompt, each on its own model or on every model named, every output judged by the
 * same assertions. A prompt evaluation is an evaluation run whose targets are prompt versions on
 * models; the workers, the report, cancelling and comparing are those of a skill's runs (runs.ts).
 */
import { LABEL_NAME } from "@kiln/contracts/labels";
import { type FieldIssue, failedPrecondition, invalidArgument } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { Principal } from "@kiln/kit/principal";
import type { Prompt } from "@kiln/proto/catalog";
import { SCOPES } from "./access.js";
import { checkAssertionList } from "./domain/assertion-list.js";
import { MODEL_ID, MODEL_ID_ISSUE } from "./domain/assertions.js";
import type { EvaluationDeps } from "./evaluation-deps.js";
import { type DatasetReader, repeatsOf, storeAndPublish } from "./run-start.js";
import type { EvaluationRunDoc, TargetDoc } from "./store/evaluation-store.js";

/** Most versions (or labels) and most models one prompt evaluation names. */
export const MAX_PROMPT_VERSIONS = 5;
export const MAX_PROMPT_MODELS = 5;
/** Most work items (items × targets × attempts) in one prompt evaluation. */
export const MAX_PROMPT_WORK_ITEMS = 100_000;

export interface StartPromptEvaluationInput {
  organizationId: string;
  promptId: string;
  datasetId: string;
  datasetVersion: number;
  versionIds: string[];
  labels: string[];
  models: string[];
  /** As JSON values (api.md's shape), checked here. */
  assertions: unknown[];
  repeats: number;
}

/** A version picked for the run, and how the report names it. */
interface PickedVersion {
  key: string;
  promptVersionId: string;
  version: number;
  promptLabel?: string;
}

function listIssues(values: string[], field: string, max: number, valid: (v: string) => boolean, what: string) {
  const issues: FieldIssue[] = [];
  if (values.length > max) issues.push({ field, issue: `must hold at most ${max}` });
  if (new Set(values).size !== values.length) issues.push({ field, issue: "must not repeat a value" });
  values.forEach((v, i) => {
    if (!valid(v)) issues.push({ field: `${field}[${i}]`, issue: what });
  });
  return issues;
}

/** The shape of the request, before anything is read: every issue at once. */
function requestIssues(input: StartPromptEvaluationInput): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (input.datasetId === "") issues.push({ field: "datasetId", issue: "is required" });
  if (input.versionIds.length > 0 && input.labels.length > 0)
    issues.push({ field: "labels", issue: "must not be given with versionIds" });
  issues.push(...listIssues(input.versionIds, "versionIds", MAX_PROMPT_VERSIONS, (v) => v !== "", "is required"));
  issues.push(
    ...listIssues(input.labels, "labels", MAX_PROMPT_VERSIONS, (l) => LABEL_NAME.test(l), "must be a label name"),
  );
  issues.push(...listIssues(input.models, "models", MAX_PROMPT_MODELS, (m) => MODEL_ID.test(m), MODEL_ID_ISSUE));
  return issues;
}

/** The versions named by id (each the prompt's), by label (each existing), else the published or latest one. */
async function versionsOf(deps: EvaluationDeps, prompt: Prompt, input: StartPromptEvaluationInput) {
  const byId = new Map(prompt.versions.map((v) => [v.id, v]));
  const picked = (id: string, promptLabel?: string): PickedVersion => {
    const version = byId.get(id)?.version ?? 0;
    return { key: promptLabel ?? `v${version}`, promptVersionId: id, version, ...(promptLabel ? { promptLabel } : {}) };
  };
  if (input.versionIds.length > 0) {
    const issues = input.versionIds.flatMap((id, i) =>
      byId.has(id) ? [] : [{ field: `versionIds[${i}]`, issue: "is not a version of this prompt" }],
    );
    if (issues.length > 0) throw invalidArgument("unknown prompt versions", issues);
    return input.versionIds.map((id) => picked(id));
  }
  if (input.labels.length > 0) {
    const labels = await deps.access.promptLabels(prompt.organizationId, prompt.id);
    const absent = input.labels.filter((l) => !labels.has(l));
    if (absent.length > 0) {
      throw failedPrecondition(
        `the prompt has no label ${absent.join(" and no label ")}`,
        absent.map((l) => ({ field: `labels[${input.labels.indexOf(l)}]`, issue: `the prompt has no label ${l}` })),
      );
    }
    return input.labels.map((l) => picked(labels.get(l) as string, l));
  }
  const fallback = prompt.publishedVersionId ?? prompt.versions.at(-1)?.id;
  if (!fallback) throw failedPrecondition("the prompt has no version");
  return [picked(fallback)];
}

/** Every version on every model named (on its own model when none is), in that order. */
function targetsOf(versions: PickedVersion[], models: string[]): TargetDoc[] {
  const base = { skillVersionId: "", inputSchemaJson: "", outputSchemaJson: "" };
  if (models.length === 0) return versions.map(({ key, ...v }) => ({ ...base, label: key, ...v }));
  return versions.flatMap(({ key, ...v }) =>
    models.map((model) => ({ ...base, label: `${key}@${model}`, ...v, model })),
  );
}

export function createPromptEvaluations(deps: EvaluationDeps, datasets: DatasetReader) {
  return {
    /** Stores the run and publishes its work, as a skill's run is started (runs.ts). */
    async startPromptRun(principal: Principal, input: StartPromptEvaluationInput): Promise<EvaluationRunDoc> {
      const repeats = repeatsOf(input.repeats);
      const issues = requestIssues(input);
      const assertions = checkAssertionList(input.assertions, issues);
      if (issues.length > 0) throw invalidArgument("invalid prompt evaluation", issues);
      const prompt = await deps.access.prompt(principal, input.organizationId, input.promptId, SCOPES.evaluationsWrite);
      const targets = targetsOf(await versionsOf(deps, prompt, input), input.models);
      const read = await datasets.itemIdsAt(prompt.organizationId, input.datasetId, input.datasetVersion);
      const itemCount = read.itemIds.length * targets.length * repeats;
      if (itemCount > MAX_PROMPT_WORK_ITEMS) {
        const issue = `${read.itemIds.length} items × ${targets.length} targets × ${repeats} attempts is more than ${MAX_PROMPT_WORK_ITEMS} runs`;
        throw invalidArgument("the prompt evaluation is too large", [{ field: "datasetId", issue }]);
      }
      return storeAndPublish(deps, {
        _id: newId("evr"),
        skillId: "",
        promptId: prompt.id,
        organizationId: prompt.organizationId,
        status: "queued",
        targets,
        assertionsJson: JSON.stringify(assertions),
        caseIdsJson: JSON.stringify(read.itemIds),
        datasetId: input.datasetId,
        datasetVersion: read.version,
        repeats,
        itemCount,
        workPublished: false,
        resultsJson: "[]",
        summaryJson: "{}",
        contractValidityJson: "{}",
        createdAt: deps.now(),
        completedAt: null,
      });
    },
  };
}

export type PromptEvaluations = ReturnType<typeof createPromptEvaluations>;
