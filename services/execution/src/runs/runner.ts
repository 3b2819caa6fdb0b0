/**
 * The run use cases: prompt runs (and model runs: model-run.ts), skill runs and previews, and reading runs back. A run reads in
 * one direction: resolve (resolve-versions.ts, runnable.ts) → render (render.ts) → call the model
 * and tools (prompt-execution.ts, skill-steps.ts) → build the record (run-record.ts) → store and
 * publish (store-run.ts); stored-runs.ts chains the last three for prompt and skill runs, agent
 * steps included.
 */
import { DomainError } from "@kiln/kit/errors";
import { apiKeyLimitOf, modelLimitOf } from "../limits/token-limits.js";
import type { RunDoc } from "../store/run-store.js";
import { apiKeyIdOf, type CallContext, evaluationRunIdOf } from "./call-context.js";
import { isModelRun, resolveModelRun } from "./model-run.js";
import {
  type PromptRunRequest,
  type ResolveDeps,
  resolvePromptRun,
  resolveSkillRun,
  type SkillRunRequest,
} from "./resolve-versions.js";
import { getRun, type ListRunsRequest, listRuns } from "./run-reads.js";
import { runDocOf } from "./run-record.js";
import { executeSkillSteps } from "./skill-steps.js";
import { type PromptRunInput, type StoredRunDeps, storePromptRun, storeSkillRun } from "./stored-runs.js";

export interface RunnerDeps extends ResolveDeps, Omit<StoredRunDeps, "now"> {
  now?: () => Date;
}

export function createRunner(deps: RunnerDeps) {
  const stored: StoredRunDeps = { ...deps, now: deps.now ?? (() => new Date()) };
  // A request naming a model and no prompt is a model run; the rest of the way is a prompt run's.
  const resolve = (req: PromptRunRequest, ctx: CallContext) =>
    isModelRun(req) ? resolveModelRun(deps, req, ctx) : resolvePromptRun(deps, req, ctx);

  return {
    async runPrompt(req: PromptRunRequest, ctx: CallContext): Promise<RunDoc> {
      const evaluationRunId = evaluationRunIdOf(req, ctx);
      const run = await resolve(req, ctx);
      return storePromptRun(stored, {
        evaluationRunId,
        organizationId: req.organizationId,
        apiKeyId: apiKeyIdOf(ctx.principal),
        apiKeyLimit: apiKeyLimitOf(ctx.principal),
        idempotencyKey: ctx.idempotencyKey,
        ...run,
        label: req.label || undefined,
        signal: ctx.signal,
        trace: ctx.trace,
      });
    },

    /** A prompt run whose model output streams to `stream` (the same run as runPrompt otherwise). */
    async streamPrompt(req: PromptRunRequest, ctx: CallContext, stream: NonNullable<PromptRunInput["stream"]>) {
      const run = await resolve(req, ctx);
      return storePromptRun(stored, {
        organizationId: req.organizationId,
        apiKeyId: apiKeyIdOf(ctx.principal),
        apiKeyLimit: apiKeyLimitOf(ctx.principal),
        ...run,
        label: req.label || undefined,
        signal: ctx.signal,
        stream,
        trace: ctx.trace,
      });
    },

    async runSkill(req: SkillRunRequest, ctx: CallContext): Promise<RunDoc> {
      const evaluationRunId = evaluationRunIdOf(req, ctx);
      const { version, input, steps, models } = await resolveSkillRun(deps, req, ctx, false);
      // The steps' models resolved again (their checks passed): the limits a skill run is admitted under.
      const stepModels = await Promise.all(
        steps.map((s) => models.resolve(s.prompt.model ?? undefined, { organizationId: s.prompt.organizationId })),
      );
      return storeSkillRun(
        { ...stored, models },
        {
          evaluationRunId,
          organizationId: req.organizationId,
          apiKeyId: apiKeyIdOf(ctx.principal),
          apiKeyLimit: apiKeyLimitOf(ctx.principal),
          modelLimits: stepModels.flatMap((m) => modelLimitOf(m) ?? []),
          idempotencyKey: ctx.idempotencyKey,
          skillId: version.skillId,
          skillVersionId: version.id,
          steps,
          input,
          label: req.label || undefined,
          signal: ctx.signal,
          trace: ctx.trace,
        },
      );
    },

    /** Runs the draft (else the published version) and stores nothing; provider failures are 502/504. */
    async previewSkill(req: SkillRunRequest, ctx: CallContext): Promise<RunDoc> {
      const { version, input, steps, models } = await resolveSkillRun(deps, req, ctx, true);
      const createdAt = stored.now();
      const records = await executeSkillSteps({ ...deps, models }, steps, input, ctx.signal);
      const failed = records.find((r) => r.execution.error);
      const code = failed?.execution.error?.code;
      if (code === "provider_error" || code === "provider_timeout") {
        throw new DomainError(code, failed?.execution.error?.message ?? "the model provider failed");
      }
      return runDocOf({
        id: "",
        kind: "skill",
        organizationId: req.organizationId,
        input: { input },
        createdAt,
        completedAt: stored.now(),
        skillId: version.skillId,
        skillVersionId: version.id,
        steps: records,
      });
    },

    listRuns: (req: ListRunsRequest, ctx: CallContext) => listRuns(deps, req, ctx),
    getRun: (req: { id: string; kind: string }, ctx: CallContext) => getRun(deps, req, ctx),
  };
}

export type Runner = ReturnType<typeof createRunner>;
