import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { jsonText } from "@kiln/kit/json-text";
import { kRequestId, principalOf } from "@kiln/kit/principal";
import { kIdempotencyKey } from "@kiln/kit/rpc/idempotency";
import type { ExecutionService } from "@kiln/proto/execution";
import type { AgentRunner } from "../runs/agent-runner.js";
import type { CallContext } from "../runs/call-context.js";
import { kGenerationRead } from "../runs/resolve-cache.js";
import { runTraceContextOf, TRACEPARENT_HEADER, traceparentOf } from "../traces/run-trace-context.js";
import { comparisonToProto } from "./comparison-proto.js";
import { runToProto } from "./run-proto.js";

/** What the use cases need of a call: who makes it, its request id, its signal, the counter read as it arrived. */
export function callContext(ctx: HandlerContext): CallContext {
  return {
    principal: principalOf(ctx),
    requestId: ctx.values.get(kRequestId),
    signal: ctx.signal,
    generationRead: ctx.values.get(kGenerationRead),
    idempotencyKey: ctx.values.get(kIdempotencyKey),
  };
}

/**
 * The call context of a call that starts a run: its trace context (under the caller's
 * `traceparent`), which its answer carries. Only these calls make one: a read needs none.
 */
export function runCallContext(ctx: HandlerContext): CallContext {
  const trace = runTraceContextOf(ctx.requestHeader.get(TRACEPARENT_HEADER));
  ctx.responseHeader.set(TRACEPARENT_HEADER, traceparentOf(trace));
  return { ...callContext(ctx), signal: runSignalOf(ctx), trace };
}

/**
 * How close to its deadline a call whose caller went away counts as timed out: the caller's clock
 * (the gateway's RUN_TIMEOUT_MS) started before the request reached this process, so its abort
 * arrives a network hop before this process's own deadline.
 */
const DEADLINE_SLACK_MS = 250;

/**
 * The call's signal as a run sees it. The caller's deadline (Connect's `deadline_exceeded`, or the
 * caller's abort at its deadline, the gateway's RUN_TIMEOUT_MS) becomes a `TimeoutError`, which
 * providers answer as `provider_timeout` (provider.ts `abortedCallError`), so a run cut off by it is
 * stored as timed out, streamed or not; any other abort (the caller went away) keeps its reason,
 * and a streamed run is stored as cancelled.
 */
export function runSignalOf(ctx: HandlerContext): AbortSignal {
  const { signal } = ctx;
  const budget = ctx.timeoutMs();
  // Without a deadline (the embedded gateway's in-process calls) there is nothing to translate.
  if (budget === undefined) return signal;
  const deadlineAt = Date.now() + budget;
  const run = new AbortController();
  const onAbort = () => {
    const reason: unknown = signal.reason;
    const deadline =
      (reason instanceof ConnectError && reason.code === Code.DeadlineExceeded) ||
      Date.now() >= deadlineAt - DEADLINE_SLACK_MS;
    run.abort(deadline ? new DOMException("the caller's deadline passed", "TimeoutError") : reason);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return run.signal;
}

/** The agent runtime RPCs (GetRun with kind "agent" reads agent runs back). */
export function agentRpcHandlers(
  agents: AgentRunner,
): Pick<
  ServiceImpl<typeof ExecutionService>,
  "runAgent" | "rerunAgentFromStep" | "loadAgentInputs" | "compareAgentRuns"
> {
  return {
    async runAgent(req, ctx) {
      return { run: runToProto(await agents.runAgent(req, runCallContext(ctx))) };
    },
    async rerunAgentFromStep(req, ctx) {
      return { run: runToProto(await agents.rerunFromStep(req, runCallContext(ctx))) };
    },
    async loadAgentInputs(req, ctx) {
      const loaded = await agents.loadInputs(req, callContext(ctx));
      return {
        agentId: loaded.agentId,
        agentVersionId: loaded.agentVersionId,
        inputs: jsonText(loaded.inputs),
        valid: loaded.valid,
        errors: loaded.errors,
      };
    },
    async compareAgentRuns(req, ctx) {
      return comparisonToProto(await agents.compare({ runIds: req.runIds }, callContext(ctx)));
    },
  };
}
