/**
 * A stored run as spans of the same shape as ingested ones (docs/observability.md "Kiln's runs as
 * traces"): the run, its steps, its provider calls (GenAI attributes, so they map to generations
 * with Kiln's prices) and its tool calls. Every span id derives from the run's root span, so the
 * same run gives the same spans whenever they are built: a run that started its own trace is
 * stored as its summary only, its spans built again when the trace is read (run-trace-reads.ts).
 */
import { encodeJson } from "@kiln/kit/store";
import type { ModelCatalog } from "@kiln/models/catalog";
import type { RunDoc } from "../store/run-store.js";
import { generationOf } from "./genai-mapping.js";
import type { JsonValue } from "./otlp-values.js";
import { childSpanIdOf, type RunTraceContext, stepSpanIdOf } from "./run-trace-context.js";
import { storedSpan } from "./span-mapping.js";
import { expiryOf } from "./trace-retention.js";
import type { SpanDoc } from "./trace-store.js";
import { summaryOf } from "./trace-summary.js";

type Attributes = Record<string, JsonValue>;
interface Call {
  provider?: string | null;
  model?: string | null;
  usage?: RunDoc["usage"];
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
const parse = <T>(text: string | null, fallback: T): T => (text ? (JSON.parse(text) as T) : fallback);
const defined = (a: Record<string, JsonValue | undefined>): Attributes =>
  Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined && v !== "")) as Attributes;

const ROOT_NAMES: Record<RunDoc["kind"], (r: RunDoc) => string> = {
  prompt: (r) => `run_prompt ${r.promptId}`,
  skill: (r) => `run_skill ${r.skillId}`,
  agent: (r) => `invoke_agent ${r.agentId ?? ""}`,
  judge: () => "judge",
  model: (r) => `run_model ${r.model ?? ""}`,
};

/** One span of a run before it is stored: its attributes are built only when the whole span is. */
interface RunSpan {
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: string;
  start: number;
  end: number;
  attributes: () => Attributes;
  error: { code: string; message: string } | null | undefined;
  /** A provider call's GenAI attributes that make its generation (all but the messages). */
  generation?: Attributes;
}

/** The spans of one run in order: the root under the caller's span, then steps, provider calls and tool calls. */
function walkRun(run: RunDoc, trace: RunTraceContext): RunSpan[] {
  const spans: RunSpan[] = [];
  // The n-th span below the root (its steps have ids of their own: stepSpanIdOf).
  const nextId = () => childSpanIdOf(trace, spans.length);

  /** A provider call and its tool calls, between start and start + latency. */
  const call = (c: Call, output: () => JsonValue | undefined, parentSpanId: string, start: number) => {
    const id = nextId();
    // Runs record the model as its catalog id (`openai/gpt-4o-mini`); GenAI wants the provider's name for it.
    const model = c.provider && c.model?.startsWith(`${c.provider}/`) ? c.model.slice(c.provider.length + 1) : c.model;
    const generation = defined({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": c.provider ?? undefined,
      "gen_ai.request.model": model ?? undefined,
      "gen_ai.usage.input_tokens": c.usage?.inputTokens,
      "gen_ai.usage.output_tokens": c.usage?.outputTokens,
      // Parts of the two above, as the GenAI conventions count them (and TokenUsage does).
      "gen_ai.usage.cache_read.input_tokens": c.usage?.cachedInputTokens,
      "gen_ai.usage.cache_creation.input_tokens": c.usage?.cacheWriteInputTokens,
      "gen_ai.usage.reasoning.output_tokens": c.usage?.reasoningTokens,
    });
    spans.push({
      spanId: id,
      parentSpanId,
      name: `chat ${model ?? ""}`.trim(),
      kind: "client",
      start,
      end: start + (c.latencyMs ?? 0),
      attributes: () => {
        const o = output();
        const messages =
          o === undefined || o === null
            ? undefined
            : [{ role: "assistant", parts: [{ type: typeof o === "string" ? "text" : "json", content: o }] }];
        return defined({ ...generation, "gen_ai.output.messages": messages ? JSON.stringify(messages) : undefined });
      },
      error: c.error,
      generation,
    });
    tools(c.toolCalls ?? [], id, start);
  };

  /** Tool calls under their provider call (or their agent step), from start. */
  const tools = (calls: ToolCall[], parentSpanId: string, start: number) => {
    for (const t of calls) {
      spans.push({
        spanId: nextId(),
        parentSpanId,
        name: `execute_tool ${t.toolKey}`,
        kind: "internal",
        start,
        end: start + t.latencyMs,
        attributes: () =>
          defined({
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": t.toolKey,
            "gen_ai.tool.call.arguments": JSON.stringify(t.input ?? null),
            "gen_ai.tool.call.result": t.output === null ? undefined : JSON.stringify(t.output),
            "kiln.tool.version_id": t.toolVersionId,
          }),
        error: t.error,
      });
    }
  };

  const created = run.createdAt.getTime();
  spans.push({
    spanId: trace.spanId,
    parentSpanId: trace.parentSpanId,
    name: ROOT_NAMES[run.kind](run).trim(),
    kind: "server",
    start: created,
    end: run.completedAt.getTime(),
    attributes: () =>
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
    error: run.status === "failed" ? run.error : null,
  });
  const steps = parse<Call[]>(run.stepsJson, []);
  if (steps.length === 0 && run.model) {
    call(
      {
        provider: run.provider,
        model: run.model,
        usage: run.usage,
        latencyMs: run.latencyMs,
        toolCalls: parse<ToolCall[]>(run.toolCallsJson, []),
        error: run.error,
      },
      () => parse<JsonValue>(run.outputJson, null),
      trace.spanId,
      created,
    );
  }
  let cursor = created;
  for (const step of steps) {
    // An agent step's child run names this span as its parent (agent-steps.ts).
    const id = step.stepId ? stepSpanIdOf(trace, step.stepId) : nextId();
    const end = cursor + (step.latencyMs ?? 0);
    spans.push({
      spanId: id,
      parentSpanId: trace.spanId,
      name: `step ${step.stepId ?? ""}`.trim(),
      kind: "internal",
      start: cursor,
      end,
      attributes: () =>
        defined({
          "kiln.step.id": step.stepId,
          "kiln.step.type": step.type,
          "kiln.step.run_id": step.runId,
          "kiln.step.reused": step.reused || undefined,
        }),
      error: step.error,
    });
    // A child run's calls are its own spans (agent-steps.ts); a reused step called nothing.
    const ownCalls = !step.runId && !step.reused;
    if (ownCalls && step.model) call(step, () => step.output, id, cursor);
    else if (ownCalls) tools(step.toolCalls ?? [], id, cursor);
    cursor = end;
  }
  return spans;
}

/** A run span as stored, with `attributes` and `generation` given (the rest as every span of the run). */
function spanDocOf(
  run: RunDoc,
  trace: RunTraceContext,
  s: RunSpan,
  expiry: ReturnType<typeof expiryOf> | undefined,
): Omit<SpanDoc, "_id" | "attributes" | "resourceAttributes" | "events" | "generation" | "sessionId" | "userId"> {
  return {
    organizationId: run.organizationId,
    traceId: trace.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId,
    name: s.name,
    kind: s.kind,
    startTime: new Date(s.start),
    endTime: new Date(Math.max(s.start, s.end)),
    status: s.error ? "error" : "ok",
    statusMessage: s.error?.message ?? "",
    scopeName: SCOPE,
    ...expiry,
  };
}

/** Every span of one run, as stored (mapped like an ingested span: span-mapping.ts). */
export function runSpans(run: RunDoc, trace: RunTraceContext, models: ModelCatalog, expiresAt?: Date): SpanDoc[] {
  const expiry = expiresAt && expiryOf(expiresAt);
  return walkRun(run, trace).map((s) =>
    storedSpan(
      {
        ...spanDocOf(run, trace, s, expiry),
        attributes: { ...s.attributes(), ...(s.error ? { "error.type": s.error.code } : {}) },
        resourceAttributes: RESOURCE,
        events: [],
      },
      models,
    ),
  );
}

/**
 * The summary of the trace of a run that started it (summaryOf of its spans), without building
 * its spans' attributes: only what a summary reads of them, the run's id and label on the root
 * and each provider call's generation, mapped as runSpans maps it.
 */
export function runTraceSummaryOf(run: RunDoc, trace: RunTraceContext, models: ModelCatalog, expiresAt?: Date) {
  const expiry = expiresAt && expiryOf(expiresAt);
  const root = encodeJson({ "kiln.run.id": run._id, ...(run.label ? { "kiln.run.label": run.label } : {}) });
  const light = (s: RunSpan, i: number): SpanDoc => ({
    _id: "",
    ...spanDocOf(run, trace, s, expiry),
    attributes: i === 0 ? root : "{}",
    resourceAttributes: "",
    events: "",
    sessionId: "",
    userId: "",
    generation: s.generation ? generationOf(s.generation, [], models) : null,
  });
  return summaryOf(walkRun(run, trace).map(light));
}
