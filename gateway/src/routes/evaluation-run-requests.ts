/**
 * The requests on one evaluation run, a skill's (`/api/skills/:id/evaluations/:evaluationRunId`) or
 * a prompt's (`/api/prompts/:id/evaluations/:evaluationRunId`): the path's id says which subject the
 * run must belong to (the evaluation service answers 404 otherwise).
 */
import type { CallOptions } from "@connectrpc/connect";
import type { EvaluationRun } from "@kiln/proto/evaluation";
import type { FastifyRequest } from "fastify";
import type { Static } from "typebox";
import Type from "typebox";
import { rpcOptions } from "../http/request.js";
import { Id } from "./catalog-requests.js";
import { organizationOfRead } from "./evaluation-case-routes.js";

export const RunParams = Type.Object({ id: Id, evaluationRunId: Id });

type RunRequest = { organizationId: string; skillId: string; promptId: string; evaluationRunId: string };

/** The RPC's subject fields for the path's `:id`. */
export const subjectOf = (subject: "skill" | "prompt", id: string) =>
  subject === "skill" ? { skillId: id, promptId: "" } : { skillId: "", promptId: id };

/** The handler of a route on one run: `call` with it, answered as `view` shows the run. */
export function byRun<V>(
  subject: "skill" | "prompt",
  view: (run: EvaluationRun | undefined) => V,
  call: (run: RunRequest, options: CallOptions) => Promise<{ run?: EvaluationRun }>,
) {
  return async (request: FastifyRequest<{ Params: Static<typeof RunParams> }>) => {
    const { id, evaluationRunId } = request.params;
    const organizationId = organizationOfRead(request, undefined);
    const r = await call({ organizationId, ...subjectOf(subject, id), evaluationRunId }, rpcOptions(request));
    return view(r.run);
  };
}
