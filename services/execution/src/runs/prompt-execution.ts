import { performance } from "node:perf_hooks";
import type { CostNote } from "@kiln/models/catalog";
import type { ChatMessage, ModelDelta, ModelResult, TokenUsage, ToolCall, ToolDefinition } from "@kiln/models/provider";
import { isProviderError, providerFailureOf } from "@kiln/models/provider";
import type { ResolvedModel } from "@kiln/models/registry";
import { addUsage } from "@kiln/models/usage";
import type { RunErrorDoc } from "../store/run-store.js";
import type { ExecutableTool, JsonValue, ToolExecutor } from "../tools/tool-executor.js";
import type { StepOutput } from "./bindings.js";
import type { CallerOptions } from "./caller-options.js";
import { modelCalls, type RouteRecord } from "./model-calls.js";
import { renderMessages } from "./render.js";
import { streamOf } from "./run-stream.js";
import type { RunnablePrompt } from "./runnable.js";

const CANCELLED = "the caller closed the stream before the run ended";

export interface ToolCallRecord {
  toolKey: string;
  toolVersionId: string;
  input: unknown;
  output: JsonValue | null;
  latencyMs: number;
  error?: { code: string; message: string };
}

export interface PromptExecution {
  status: "succeeded" | "failed";
  output: StepOutput | null;
  provider: string;
  model: string;
  usage: TokenUsage;
  /** null when the model has no price. */
  estimatedCostUsd: number | null;
  /** What the estimate assumed (costNotesOf); absent when nothing. */
  costNotes?: CostNote[];
  latencyMs: number;
  toolCalls: ToolCallRecord[];
  error?: RunErrorDoc;
  /** Set when the model was a route: its name and every attempt of its targets. */
  routed?: RouteRecord;
}

/** `{ costNotes }` when the estimate assumed something, else nothing (records omit an empty list). */
export const costNotesField = (notes: CostNote[]) => (notes.length > 0 ? { costNotes: notes } : {});

/** A call that failed before the model answered anything: no tokens, no cost. */
export function failedBeforeAnswer(model: ResolvedModel, error: RunErrorDoc, latencyMs = 0): PromptExecution {
  return {
    status: "failed",
    output: null,
    provider: model.entry.provider,
    model: model.entry.id,
    usage: { inputTokens: 0, outputTokens: 0 },
    estimatedCostUsd: 0,
    latencyMs,
    toolCalls: [],
    error,
  };
}

export interface ExecuteOptions {
  model: ResolvedModel;
  tools: ToolExecutor;
  /** Model turns that may call tools before the run is failed (bounded loop). */
  maxToolRounds: number;
  signal?: AbortSignal;
  /** The caller's messages, after the version's own (RunPromptRequest.messages). */
  extraMessages?: ChatMessage[];
  /** The caller's tools, tool choice and sampling settings (RunPromptRequest). */
  caller?: CallerOptions;
  /**
   * A streaming run: the model's text and its calls of the caller's tools, as they arrive (see
   * run-stream.ts). Its execution, aborted by `signal`, is a failed one with error `cancelled` and
   * the text received so far as its output, rather than a throw.
   */
  onDelta?: (delta: ModelDelta) => void;
}

/** What a tool call is recorded as in a run: its output, or its error and no output. */
export function toolCallRecordOf(
  toolKey: string,
  toolVersionId: string,
  input: unknown,
  executed: { output: JsonValue | null; latencyMs: number; error?: { code: string; message: string } },
): ToolCallRecord {
  return {
    toolKey,
    toolVersionId,
    input,
    output: executed.error ? null : executed.output,
    latencyMs: Math.round(executed.latencyMs),
    ...(executed.error ? { error: { code: executed.error.code, message: executed.error.message } } : {}),
  };
}

/** Runs one tool the model asked for: its record, and the message that hands its result back. */
async function callTool(
  byKey: Map<string, ExecutableTool>,
  call: ToolCall,
  options: ExecuteOptions,
): Promise<{ record: ToolCallRecord; message: ChatMessage }> {
  const tool = byKey.get(call.name);
  const executed = tool
    ? await options.tools.execute(tool, call.input, { signal: options.signal })
    : {
        output: null,
        latencyMs: 0,
        error: { code: "unknown_tool", message: `no tool "${call.name}" is attached` },
      };
  return {
    record: toolCallRecordOf(call.name, tool?.toolVersionId ?? "", call.input, executed),
    message: {
      role: "tool",
      toolCallId: call.id,
      content: executed.error ? JSON.stringify({ error: executed.error }) : JSON.stringify(executed.output),
    },
  };
}

/**
 * Stage three of a run, call the model and tools: one prompt version against one model: render, call, run the tools the model asks for and call
 * again with their results, until the model answers or `maxToolRounds` is spent. Provider
 * failures become a failed execution (kind as the error code), never a throw: the caller stores it.
 */
export async function executePrompt(
  prompt: RunnablePrompt,
  variables: Record<string, unknown>,
  options: ExecuteOptions,
): Promise<PromptExecution> {
  const started = performance.now();
  // An include that stands for nothing now (api.md "Partials") fails the run before any model call.
  if (prompt.unresolvedPartial) {
    return failedBeforeAnswer(options.model, { code: "unresolved_partial", message: prompt.unresolvedPartial.message });
  }
  const calls = modelCalls(options.model);
  const messages = renderMessages(prompt, variables, options.extraMessages);
  const callerTools = options.caller?.tools ?? [];
  const definitions: ToolDefinition[] = [
    ...prompt.tools.map((t) => ({
      name: t.toolKey,
      description: t.description || undefined,
      inputSchema: t.inputSchema as Record<string, unknown>,
    })),
    ...callerTools,
  ];
  const isCallerTool = new Set(callerTools.map((t) => t.name));
  const sampling = options.caller?.sampling ?? {};
  const byKey = new Map(prompt.tools.map((t) => [t.toolKey, t]));
  let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  const toolCalls: ToolCallRecord[] = [];
  const result = (status: PromptExecution["status"], output: StepOutput | null, error?: PromptExecution["error"]) => {
    const routed = calls.record();
    return {
      status,
      output,
      // A route's execution is recorded as the target that answered (else the last one tried).
      provider: calls.entry().provider,
      model: calls.entry().id,
      usage,
      // The price in force now is the one stored with the run.
      estimatedCostUsd: calls.costUsd(),
      ...costNotesField(calls.costNotes()),
      latencyMs: Math.round(performance.now() - started),
      toolCalls,
      ...(error ? { error } : {}),
      ...(routed ? { routed } : {}),
    };
  };

  const stream = options.onDelta ? streamOf(options.onDelta, isCallerTool) : undefined;
  for (let round = 0; ; round++) {
    let answer: ModelResult;
    stream?.newTurn();
    try {
      answer = await options.model.generate({
        messages,
        tools: definitions.length > 0 ? definitions : undefined,
        responseFormat: prompt.responseFormat,
        temperature: prompt.temperature ?? undefined,
        maxOutputTokens: prompt.maxOutputTokens ?? undefined,
        ...sampling,
        // The caller's choice holds for the first turn; after Kiln's own tools ran, the model may answer.
        ...(round === 0 && options.caller?.toolChoice !== undefined ? { toolChoice: options.caller.toolChoice } : {}),
        variables,
        signal: options.signal,
        ...(stream ? { onDelta: stream.onDelta } : {}),
      });
    } catch (e) {
      calls.failed(e);
      if (isProviderError(e)) return result("failed", null, providerFailureOf(e));
      if (stream && options.signal?.aborted) {
        return result("failed", { text: stream.text() }, { code: "cancelled", message: CANCELLED });
      }
      throw e;
    }
    calls.answered(answer);
    usage = addUsage(usage, answer.usage);
    if (answer.toolCalls.length === 0) return result("succeeded", outputOf(answer));
    const forCaller = answer.toolCalls.filter((c) => isCallerTool.has(c.name));
    if (forCaller.length === 0 && round >= options.maxToolRounds) {
      return result("failed", null, {
        code: "max_tool_rounds",
        message: `the model still called tools after ${options.maxToolRounds} rounds`,
      });
    }
    messages.push({
      role: "assistant",
      content: answer.text,
      toolCalls: answer.toolCalls,
      ...(answer.reasoning ? { reasoning: answer.reasoning } : {}),
    });
    for (const call of answer.toolCalls) {
      if (isCallerTool.has(call.name)) continue;
      const { record, message } = await callTool(byKey, call, options);
      toolCalls.push(record);
      messages.push(message);
    }
    // A call to a caller's tool ends the run (Kiln's own calls of that turn ran and are recorded):
    // the caller runs it and sends the result back.
    if (forCaller.length > 0) return result("succeeded", { text: answer.text, toolCalls: forCaller });
  }
}

/** What a model turn without tool calls answered, as a run's output. */
function outputOf(answer: ModelResult): StepOutput {
  const output: StepOutput =
    answer.json !== undefined ? { text: answer.text, json: answer.json } : { text: answer.text };
  if (answer.finishReason === "length" || answer.finishReason === "content_filter") {
    output.finishReason = answer.finishReason;
  }
  return output;
}
