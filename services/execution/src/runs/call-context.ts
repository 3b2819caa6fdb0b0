import { createContextValues } from "@connectrpc/connect";
import { permissionDenied } from "@kiln/kit/errors";
import { kPrincipal, kRequestId, type Principal } from "@kiln/kit/principal";
import { apiKeyLimitOf, limitList } from "../limits/token-limits.js";
import type { RunTraceContext } from "../traces/run-trace-context.js";
import { kGenerationRead } from "./resolve-cache.js";

/** What the run use cases need of an RPC call. */
export interface CallContext {
  principal: Principal;
  requestId?: string;
  signal?: AbortSignal;
  /** The catalog's change counter, read since the call arrived (resolve-cache.ts). */
  generationRead?: Promise<number>;
  /** The trace context a run started by this call records its spans under (docs/observability.md). */
  trace?: RunTraceContext;
  /** The call's idempotency key, when it came with an Idempotency-Key (kit's kIdempotencyKey). */
  idempotencyKey?: string;
}

/** The options of a catalog call made for the caller: its principal, request id and counter read. */
export function catalogCallOptions(ctx: CallContext) {
  return {
    contextValues: createContextValues()
      .set(kPrincipal, ctx.principal)
      .set(kRequestId, ctx.requestId)
      .set(kGenerationRead, ctx.generationRead),
  };
}

/**
 * The evaluation run a run is made for, as the request names it: only a service principal (the
 * evaluation service, acting in the run's organization) may say so; anyone else is refused (403),
 * so that a run's provenance cannot be forged. Undefined when the request names none.
 */
export function evaluationRunIdOf(req: { evaluationRunId?: string }, ctx: CallContext): string | undefined {
  if (!req.evaluationRunId) return undefined;
  if (ctx.principal.type !== "service") {
    throw permissionDenied("only the evaluation service names the evaluation run a run is made for");
  }
  return req.evaluationRunId;
}

/** The API key a call was made with, when it was (stored on its runs for the usage ledger). */
export const apiKeyIdOf = (principal: Principal): string | undefined =>
  principal.type === "api_key" ? principal.id : undefined;

/** What a run this call starts carries of its caller: its API key, that key's token-per-minute limit, its idempotency key. */
export const runCallerOf = (ctx: CallContext) => ({
  apiKeyId: apiKeyIdOf(ctx.principal),
  idempotencyKey: ctx.idempotencyKey,
  tokenLimits: limitList(apiKeyLimitOf(ctx.principal)),
});
