import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { jsonText } from "@kiln/kit/json-text";
import { kRequestId, principalOf } from "@kiln/kit/principal";
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
  };
}

/**
 * The call context of a call that starts a run: its trace context (under the caller's
 * `traceparent`), which its answer carries. Only these calls make one: a read needs none.
 */
export function runCallContext(ctx: HandlerContext): CallContext {
  const trace = runTraceContextOf(ctx.requestHeader.get(TRACEPARENT_HEADER));
  ctx.responseHeader.set(TRACEPARENT_HEADER, traceparentOf(trace));
  return { ...callContext(ctx), trace };
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
