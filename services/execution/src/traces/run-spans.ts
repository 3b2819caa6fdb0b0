/**
 * A stored run as spans of the same shape as ingested ones (docs/observability.md "Kiln's runs as
 * traces"): the run, its steps, its provider calls (GenAI attributes, so they map to generations
 * with Kiln's prices) and its tool calls.
 */
import { randomBytes } from "node:crypto";
import type { ModelCatalog } from "../domain/model-catalog.js";
import type { RunDoc } from "../store/run-store.js";
import type { JsonValue } from "./otlp-values.js";
import { type RunTraceContext, stepSpanIdOf } from "./run-trace-context.js";
import { storedSpan } from "./span-mapping.js";
import { expiryOf } from "./trace-retention.js";
import type { SpanDoc } from "./trace-store.js";

type Attributes = Record<string, JsonValue>;
interface Call {
  provider?: string | null;
  model?: string | null;
  usage?: { inputTokens: number; outputTokens: number };
  latencyMs?: number;
  status?: string;
  output?: JsonValue;
  toolCalls?: ToolCall[];
  error?: { code: string; message: string } | null;
  stepId?: string;
  type?: string;
  /** An agent step's child run: its spans are in the same trace, under the step's span. */
  runId?: string;
  reused?: boolean;
}
interface ToolCall {
  toolKey: string;
  toolVersionId?: string;
  input: JsonValue;
  output: JsonValue | null;
  latencyMs: number;
  error?: { code: string; message: string };
}

const RESOURCE: Attributes = { "service.name": "kiln" };
const SCOPE = "kiln";
const spanId = () => randomBytes(8).toString("hex");
const parse = <T>(text: string | null, fallback: T): T => (text ? (JSON.parse(text) as T) : fallback);
const defined = (a: Record<string, JsonValue | undefined>): Attributes =>
  Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined && v !== "")) as Attributes;

const ROOT_NAMES: Record<RunDoc["kind"], (r: RunDoc) => string> = {
  prompt: (r) => `run_prompt ${r.promptId}`,
  skill: (r) => `run_skill ${r.skillId}`,
  agent: (r) => `invoke_agent ${r.agentId ?? ""}`,
  judge: () => "judge",
};

/** Every span of one run: the root under the caller's span, then steps, provider calls and tool calls. */
export function runSpans(run: RunDoc, trace: RunTraceContext, models: ModelCatalog, expiresAt?: Date): SpanDoc[] {
  const spans: SpanDoc[] = [];
  const add = (
    s: { spanId: string; parentSpanId: string; name: string; kind: string; start: number; end: number },
    attributes: Attributes,
    error: { code: string; message: string } | null | undefined,
  ) =>
    spans.push(
      storedSpan(
        {
          organizationId: run.organizationId,
          traceId: trace.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId,
          name: s.name,
          kind: s.kind,
          startTime: new Date(s.start),
          endTime: new Date(Math.max(s.start, s.end)),
          status: error ? "error" : "ok",
          statusMessage: error?.message ?? "",
          attributes: { ...attributes, ...(error ? { "error.type": error.code } : {}) },
          resourceAttributes: RESOURCE,
          events: [],
          scopeName: SCOPE,
          ...(expiresAt && expiryOf(expiresAt)),
        },
        models,
      ),
    );

  /** A provider call and its tool calls, between start and start + latency. */
  const call = (c: Call, parentSpanId: string, start: number) => {
    const id = spanId();
    // Runs record the model as its catalog id (`openai/gpt-4o-mini`); GenAI wants the provider's name for it.
    const model = c.provider && c.model?.startsWith(`${c.provider}/`) ? c.model.slice(c.provider.length + 1) : c.model;
    const end = start + (c.latencyMs ?? 0);
    const output =
      c.output === undefined || c.output === null
        ? undefined
        : [{ role: "assistant", parts: [{ type: typeof c.output === "string" ? "text" : "json", content: c.output }] }];
    add(
      { spanId: id, parentSpanId, name: `chat ${model ?? ""}`.trim(), kind: "client", start, end },
      defined({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": c.provider ?? undefined,
        "gen_ai.request.model": model ?? undefined,
        "gen_ai.usage.input_tokens": c.usage?.inputTokens,
        "gen_ai.usage.output_tokens": c.usage?.outputTokens,
        "gen_ai.output.messages": output ? JSON.stringify(output) : undefined,
      }),
      c.error,
    );
    tools(c.toolCalls ?? [], id, start);
  };

  /** Tool calls under their provider call (or their agent step), from start. */
  const tools = (calls: ToolCall[], parentSpanId: string, start: number) => {
    for (const t of calls) {
      add(
        {
          spanId: spanId(),
          parentSpanId,
          name: `execute_tool ${t.toolKey}`,
          kind: "internal",
          start,
          end: start + t.latencyMs,
        },
        defined({
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": t.toolKey,
          "gen_ai.tool.call.arguments": JSON.stringify(t.input ?? null),
          "gen_ai.tool.call.result": t.output === null ? undefined : JSON.stringify(t.output),
          "kiln.tool.version_id": t.toolVersionId,
        }),
        t.error,
      );
    }
  };

  const created = run.createdAt.getTime();
  add(
    {
      spanId: trace.spanId,
      parentSpanId: trace.parentSpanId,
      name: ROOT_NAMES[run.kind](run).trim(),
      kind: "server",
      start: created,
      end: run.completedAt.getTime(),
    },
    defined({
      "kiln.run.id": run._id,
      "kiln.run.kind": run.kind,
      "kiln.run.label": run.label || undefined,
      "kiln.prompt.id": run.promptId,
      "kiln.prompt.version_id": run.promptVersionId,
      "kiln.skill.id": run.skillId,
      "kiln.skill.version_id": run.skillVersionId,
      "kiln.agent.id": run.agentId,
      "kiln.agent.version_id": run.agentVersionId,
      "kiln.run.input": run.inputJson,
      "kiln.run.output": run.outputJson ?? undefined,
    }),
    run.status === "failed" ? run.error : null,
  );
  const steps = parse<Call[]>(run.stepsJson, []);
  if (steps.length === 0 && run.model) {
    call(
      {
        provider: run.provider,
        model: run.model,
        usage: run.usage,
        latencyMs: run.latencyMs,
        output: parse<JsonValue>(run.outputJson, null),
        toolCalls: parse<ToolCall[]>(run.toolCallsJson, []),
        error: run.error,
      },
      trace.spanId,
      created,
    );
  }
  let cursor = created;
  for (const step of steps) {
    // An agent step's child run names this span as its parent (agent-steps.ts).
    const id = step.stepId ? stepSpanIdOf(trace, step.stepId) : spanId();
    const end = cursor + (step.latencyMs ?? 0);
    add(
      {
        spanId: id,
        parentSpanId: trace.spanId,
        name: `step ${step.stepId ?? ""}`.trim(),
        kind: "internal",
        start: cursor,
        end,
      },
      defined({
        "kiln.step.id": step.stepId,
        "kiln.step.type": step.type,
        "kiln.step.run_id": step.runId,
        "kiln.step.reused": step.reused || undefined,
      }),
      step.error,
    );
    // A child run's calls are its own spans (agent-steps.ts); a reused step called nothing.
    const ownCalls = !step.runId && !step.reused;
    if (ownCalls && step.model) call(step, id, cursor);
    else if (ownCalls) tools(step.toolCalls ?? [], id, cursor);
    cursor = end;
  }
  return spans;
}
