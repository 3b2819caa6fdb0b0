/** Reading runs back: one by id, or an organization's page of them. */
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import { invalidArgument, notFound } from "@kiln/kit/errors";
import { findPageByTime } from "@kiln/kit/pagination";
import type { Collection } from "@kiln/kit/store";
import type { RunDoc } from "../store/run-store.js";
import type { CallContext } from "./call-context.js";

export interface RunReadDeps {
  runs: Collection<RunDoc>;
  identityAuth: IdentityAuth;
}

export interface ListRunsRequest {
  organizationId: string;
  limit: number;
  cursor: string;
  kind: string;
  status: string;
  model: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

/** The organization's runs, newest first, filtered by kind, status, model and creation time. */
export async function listRuns(deps: RunReadDeps, req: ListRunsRequest, ctx: CallContext) {
  if (req.organizationId === "")
    throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
  await deps.identityAuth.authorize(
    ctx.principal,
    { organizationId: req.organizationId, requireAi: true, scope: "runs:read" },
    ctx.requestId,
  );
  const created: Record<string, Date> = {};
  if (req.createdAfter) created.$gte = req.createdAfter;
  if (req.createdBefore) created.$lt = req.createdBefore;
  const filter = {
    organizationId: req.organizationId,
    ...(req.kind ? { kind: req.kind } : {}),
    ...(req.status ? { status: req.status } : {}),
    ...(req.model ? { model: req.model } : {}),
    ...(Object.keys(created).length > 0 ? { createdAt: created } : {}),
  };
  // By creation time, not by id: ids sort by time within a kind only (run_, srun_, jrun_ prefixes).
  return findPageByTime(deps.runs, filter, { field: "createdAt", direction: -1 }, req);
}

/** A run of the caller's organization (of `kind` when given); another organization's is not found. */
export async function getRun(deps: RunReadDeps, req: { id: string; kind: string }, ctx: CallContext): Promise<RunDoc> {
  const what = req.kind === "skill" || req.kind === "judge" || req.kind === "model" ? `${req.kind} run` : "run";
  const run = await deps.runs.findOne({ _id: req.id });
  if (!run || (req.kind && run.kind !== req.kind)) throw notFound(what);
  await authorizeOnResource(deps.identityAuth, ctx.principal, {
    organizationId: run.organizationId,
    scope: "runs:read",
    what,
    requestId: ctx.requestId,
  });
  return run;
}
