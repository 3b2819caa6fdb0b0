/**
 * What a reviewer sees of an item, read from the execution service as the evaluation service acting
 * in the item's organization: the run (inputs, output, model, cost…), or the trace's root span and
 * its model calls. Adding an item reads the same way, so a run or trace of another organization is
 * as missing as one that does not exist.
 */
import type { Client } from "@connectrpc/connect";
import { DomainError } from "@kiln/kit/errors";
import type { ExecutionService, Run } from "@kiln/proto/execution";
import type { Span, Trace, TraceService } from "@kiln/proto/traces";
import { inOrganization, remoteCall } from "../access.js";
import type { RenderedMessage } from "./rendered-messages.js";

export type RunReader = Pick<Client<typeof ExecutionService>, "getRun">;
export type TraceReader = Pick<Client<typeof TraceService>, "getTrace">;

export interface ItemContent {
  run?: Run;
  trace?: Trace;
  spans: Span[];
  messages: RenderedMessage[];
}

export interface ContentReader {
  /** The run, or undefined when the organization has none with this id. */
  run(organizationId: string, runId: string): Promise<Run | undefined>;
  /** The trace with its root span and model calls, or undefined when the organization has none. */
  trace(organizationId: string, traceId: string): Promise<{ trace: Trace; spans: Span[] } | undefined>;
  /** What the reviewer of an item is shown; empty when its run or trace is gone. */
  contentOf(item: { organizationId: string; targetType: string; targetId: string }): Promise<ItemContent>;
}

async function unlessMissing<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await remoteCall(read);
  } catch (e) {
    if (e instanceof DomainError && (e.kind === "not_found" || e.kind === "invalid_argument")) return undefined;
    throw e;
  }
}

export function createContentReader(
  execution: RunReader,
  traces: TraceReader,
  messagesOf: (run: Run) => Promise<RenderedMessage[]>,
): ContentReader {
  const reader: ContentReader = {
    async run(organizationId, runId) {
      const r = await unlessMissing(execution.getRun({ id: runId, kind: "" }, inOrganization(organizationId)));
      return r?.run;
    },
    async trace(organizationId, traceId) {
      const r = await unlessMissing(traces.getTrace({ organizationId, traceId }, inOrganization(organizationId)));
      if (!r?.trace) return undefined;
      const root = r.spans.find((s) => s.parentSpanId === "") ?? r.spans[0];
      const generations = r.spans.filter((s) => s !== root && s.generation);
      return { trace: r.trace, spans: root ? [root, ...generations] : generations };
    },
    async contentOf(item) {
      if (item.targetType === "run") {
        const run = await reader.run(item.organizationId, item.targetId);
        // A prompt version gone since the run: the run without its messages.
        const messages = run ? ((await unlessMissing(messagesOf(run))) ?? []) : [];
        return { run, spans: [], messages };
      }
      const t = await reader.trace(item.organizationId, item.targetId);
      return t ? { trace: t.trace, spans: t.spans, messages: [] } : { spans: [], messages: [] };
    },
  };
  return reader;
}
