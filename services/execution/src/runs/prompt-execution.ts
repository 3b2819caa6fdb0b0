import { performance } from "node:perf_hooks";
import { templateRenderer } from "@kiln/kit/templates";
import { estimateCostUsd } from "../domain/model-catalog.js";
import type { ChatMessage, ModelResult, ResponseFormat, ToolDefinition } from "../providers/provider.js";
import { isProviderError, providerFailureOf } from "../providers/provider.js";
import type { ResolvedModel } from "../providers/provider-registry.js";
import type { RunErrorDoc } from "../store/run-store.js";
import type { ExecutableTool, JsonValue, ToolExecutor } from "../tools/tool-executor.js";
import type { StepOutput } from "./bindings.js";

/** A prompt version ready to run: what the catalog resolved, with its JSON parsed. */
export interface RunnablePrompt {
  promptId: string;
  promptVersionId: string;
  systemPrompt: string;
  developerPrompt: string | null;
  variablesSchema: unknown;
  responseFormat: ResponseFormat;
  temperature: number | null;
  maxOutputTokens: number | null;
  model: string | null;
  tools: (ExecutableTool & { description: string })[];
}

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
  usage: { inputTokens: number; outputTokens: number };
  /** null when the model has no price. */
  estimatedCostUsd: number | null;
  latencyMs: number;
  toolCalls: ToolCallRecord[];
  error?: RunErrorDoc;
}

/**
 * The variables as Mustache's view: objects without a prototype, so that a placeholder naming an
 * absent variable such as `{{constructor}}`, `{{toString}}` or `{{__proto__}}` renders nothing
 * instead of what Object.prototype holds (Mustache looks names up with `in` and calls functions).
 */
function viewOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(viewOf);
  if (value === null || typeof value !== "object") return value;
  const view = Object.create(null) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(view, key, { value: viewOf(item), enumerable: true, writable: true, configurable: true });
  }
  return view;
}

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

/** The parse of recent templates, bounded (Mustache's default cache keeps every template forever). */
const templates = templateRenderer();
const asText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** Mustache without HTML escaping (api.md "Prompts"); non-string values render as JSON. */
export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  return templates.render(template, viewOf(variables), asText);
}

export interface ExecuteOptions {
  model: ResolvedModel;
  tools: ToolExecutor;
  /** Model turns that may call tools before the run is failed (bounded loop). */
  maxToolRounds: number;
  signal?: AbortSignal;
  /** The caller's messages, after the version's own (RunPromptRequest.messages_json). */
  extraMessages?: ChatMessage[];
}

/**
 * One prompt version against one model: render, call, run the tools the model asks for and call
 * again with their results, until the model answers or `maxToolRounds` is spent. Provider
 * failures become a failed execution (kind as the error code), never a throw: the caller stores it.
 */
export async function executePrompt(
  prompt: RunnablePrompt,
  variables: Record<string, unknown>,
  options: ExecuteOptions,
): Promise<PromptExecution> {
  const started = performance.now();
  const { entry } = options.model;
  const messages: ChatMessage[] = [{ role: "system", content: renderTemplate(prompt.systemPrompt, variables) }];
  if (prompt.developerPrompt)
    messages.push({ role: "developer", content: renderTemplate(prompt.developerPrompt, variables) });
  if (options.extraMessages) messages.push(...options.extraMessages);
  const definitions: ToolDefinition[] = prompt.tools.map((t) => ({
    name: t.toolKey,
    description: t.description || undefined,
    inputSchema: t.inputSchema as Record<string, unknown>,
  }));
  const byKey = new Map(prompt.tools.map((t) => [t.toolKey, t]));
  const usage = { inputTokens: 0, outputTokens: 0 };
  const toolCalls: ToolCallRecord[] = [];
  const result = (status: PromptExecution["status"], output: StepOutput | null, error?: PromptExecution["error"]) => ({
    status,
    output,
    provider: entry.provider,
    model: entry.id,
    usage,
    // The price in force now is the one stored with the run.
    estimatedCostUsd: estimateCostUsd(entry.pricing, usage),
    latencyMs: Math.round(performance.now() - started),
    toolCalls,
    ...(error ? { error } : {}),
  });

  for (let round = 0; ; round++) {
    let answer: ModelResult;
    try {
      answer = await options.model.generate({
        messages,
        tools: definitions.length > 0 ? definitions : undefined,
        responseFormat: prompt.responseFormat,
        temperature: prompt.temperature ?? undefined,
        maxOutputTokens: prompt.maxOutputTokens ?? undefined,
        variables,
        signal: options.signal,
      });
    } catch (e) {
      if (isProviderError(e)) return result("failed", null, providerFailureOf(e));
      throw e;
    }
    usage.inputTokens += answer.usage.inputTokens;
    usage.outputTokens += answer.usage.outputTokens;
    if (answer.toolCalls.length === 0) {
      return result(
        "succeeded",
        answer.json !== undefined ? { text: answer.text, json: answer.json } : { text: answer.text },
      );
    }
    if (round >= options.maxToolRounds) {
      return result("failed", null, {
        code: "max_tool_rounds",
        message: `the model still called tools after ${options.maxToolRounds} rounds`,
      });
    }
    messages.push({ role: "assistant", content: answer.text, toolCalls: answer.toolCalls });
    for (const call of answer.toolCalls) {
      const tool = byKey.get(call.name);
      const executed = tool
        ? await options.tools.execute(tool, call.input, { signal: options.signal })
        : {
            output: null,
            latencyMs: 0,
            error: { code: "unknown_tool", message: `no tool "${call.name}" is attached` },
          };
      toolCalls.push({
        toolKey: call.name,
        toolVersionId: tool?.toolVersionId ?? "",
        input: call.input,
        output: executed.error ? null : executed.output,
        latencyMs: Math.round(executed.latencyMs),
        ...(executed.error ? { error: { code: executed.error.code, message: executed.error.message } } : {}),
      });
      messages.push({
        role: "tool",
        toolCallId: call.id,
        content: executed.error ? JSON.stringify({ error: executed.error }) : JSON.stringify(executed.output),
      });
    }
  }
}
