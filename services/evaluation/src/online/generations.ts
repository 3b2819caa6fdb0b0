/**
 * Online evaluation of ingested generations: which generation spans of a trace.ingested event a
 * traces rule samples, and a generation span as the scorers judge it (read with the trace
 * service's GetTrace, as the evaluation service in the trace's organization).
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { IngestedGeneration } from "@kiln/contracts/events";
import { actingFor } from "@kiln/kit/principal";
import { domainErrorOf } from "@kiln/kit/rpc/errors";
import type { TraceService } from "@kiln/proto/traces";
import { EVALUATION_SERVICE } from "../access.js";
import type { ScoredTarget, ScoreJob } from "./jobs.js";
import type { OnlineRuleDoc } from "./online-store.js";

export type TraceClient = Pick<Client<typeof TraceService>, "getTrace">;

/** Whether a traces rule's filter takes the generation: every field it gives matches. */
export function ruleMatchesGeneration(rule: OnlineRuleDoc, g: IngestedGeneration): boolean {
  const f = rule.target.filter;
  if (rule.target.kind !== "traces" || !f) return false;
  return (
    (f.name === "" || f.name === g.name) &&
    (f.model === "" || f.model === g.requestModel || f.model === g.responseModel) &&
    (f.sessionId === "" || f.sessionId === g.sessionId)
  );
}

/** The text of a message as the GenAI conventions write it: its content, or its text parts joined. */
function messageText(m: unknown): string {
  if (typeof m !== "object" || m === null) return "";
  const { content, parts } = m as { content?: unknown; parts?: unknown };
  if (typeof content === "string") return content;
  const items = Array.isArray(parts) ? parts : Array.isArray(content) ? content : [];
  return items
    .map((p) => {
      const part = p as { content?: unknown; text?: unknown };
      return typeof part.content === "string" ? part.content : typeof part.text === "string" ? part.text : "";
    })
    .join("");
}

const messagesOf = (json: string | undefined): unknown[] => {
  if (!json) return [];
  const value = JSON.parse(json) as unknown;
  return Array.isArray(value) ? value : [];
};

/** Reads a generation job's span: its output messages' text is the output judged, its input messages the input. */
export function generationReader(traces: TraceClient) {
  return async (job: ScoreJob, signal: AbortSignal): Promise<ScoredTarget | null> => {
    let res: Awaited<ReturnType<TraceClient["getTrace"]>>;
    try {
      res = await traces.getTrace(
        { organizationId: job.organizationId, traceId: job.traceId ?? "" },
        { signal, contextValues: actingFor(EVALUATION_SERVICE, job.organizationId) },
      );
    } catch (e) {
      // A trace that no longer exists scores nothing; anything else is retried.
      if (domainErrorOf(e)?.kind === "not_found") return null;
      throw e;
    }
    const span = res.spans.find((s) => s.spanId === job.spanId);
    const g = span?.generation;
    if (!span || !g) return null;
    const output = messagesOf(g.outputMessages?.json);
    const start = span.startTime ? timestampDate(span.startTime) : new Date();
    const end = span.endTime ? timestampDate(span.endTime) : start;
    return {
      base: {
        targetKey: `${span.traceId}:${span.spanId}`,
        targetType: "generation",
        runId: "",
        traceId: span.traceId,
        spanId: span.spanId,
        promptId: "",
        skillId: "",
        agentId: "",
        versionId: "",
        label: "",
        runCostUsd: g.costUsd ?? null,
        occurredAt: end,
      },
      inputJson: JSON.stringify({ messages: messagesOf(g.inputMessages?.json) }),
      observation: {
        output: output.length > 0 ? { text: output.map(messageText).join("\n") } : null,
        latencyMs: end.getTime() - start.getTime(),
        estimatedCostUsd: g.costUsd ?? null,
      },
    };
  };
}
