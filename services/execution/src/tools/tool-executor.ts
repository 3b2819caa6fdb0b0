/**
 * Runs one tool call of the model's tool-calling loop (docs/concepts.md "Tool", api.md "Tools"). Every
 * failure the model should hear about (bad input, a refused host, an HTTP error, a timeout) comes
 * back as `error` in the result, so the loop can hand it to the model and record it in the run's
 * `toolCalls`. Only the caller's own abort, and bugs, reject.
 */
import { performance } from "node:perf_hooks";
import type { HostAllowlist, HostPattern } from "@kiln/kit/outbound/host-patterns";
import { createHttpTool, type ResolveHost, resolveWithDns } from "./http-tool.js";
import { createInputValidator } from "./input-validator.js";
import { type JsonValue, type ToolError, ToolFailure } from "./tool-failure.js";

export type { HostAllowlist, HostPattern } from "@kiln/kit/outbound/host-patterns";
export type { ResolveHost } from "./http-tool.js";
export type { JsonValue, ToolError, ToolErrorCode } from "./tool-failure.js";

export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

export interface ToolExecutorOptions {
  /** Hosts `http` tools may call, parsed by kit's one loader (`hostAllowlistOf`). */
  allowlist: HostAllowlist;
  /**
   * Host patterns (same syntax) that may also reach private, loopback, link-local, CGNAT and
   * unique-local addresses. A host must still be on `allowlist`. Unspecified, broadcast and
   * multicast addresses are refused whatever this says.
   */
  allowPrivateFor?: readonly HostPattern[];
  /** Default 1 MiB (api.md). */
  maxResponseBytes?: number;
  /** Name resolution, default `dns.lookup(host, {all: true})`; injectable for tests. */
  lookup?: ResolveHost;
  /** Milliseconds from an arbitrary origin, default `performance.now`. */
  now?: () => number;
}

/** A tool version as the run executor resolved it from the catalog. */
export interface ExecutableTool {
  toolKey: string;
  toolVersionId: string;
  /** `manual_stub` or `http`; anything else is reported as `invalid_tool_config`. */
  type: string;
  /** Parsed JSON: `{result}` for `manual_stub`, `{url, method, headers?, timeoutMs?}` for `http`. */
  config: unknown;
  /** Parsed JSON Schema (2020-12) of the input. */
  inputSchema: unknown;
  /** The organization that owns the tool: the allowlist may be narrowed for it. */
  organizationId?: string;
}

export interface ToolCallContext {
  /** Aborting stops the call at once; `execute` then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface ToolCallResult {
  /** The tool's JSON output; `null` when `error` is set. */
  output: JsonValue;
  latencyMs: number;
  error?: ToolError;
}

export interface ToolExecutor {
  execute(tool: ExecutableTool, input: unknown, context?: ToolCallContext): Promise<ToolCallResult>;
}

function manualStubOutput(config: unknown): JsonValue {
  const result =
    typeof config === "object" && config !== null && Object.hasOwn(config, "result")
      ? (config as { result: unknown }).result
      : undefined;
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    throw new ToolFailure("invalid_tool_config", "the tool's config.result must be an object", {
      details: [{ field: "config.result", issue: "must be an object" }],
    });
  }
  // A copy: the loop (or the model's next turn) must not be able to change the stored version.
  return structuredClone(result) as JsonValue;
}

function summarize(issues: readonly { field: string; issue: string }[]): string {
  const shown = issues.slice(0, 10).map((i) => `${i.field} ${i.issue}`);
  const more = issues.length > shown.length ? `; and ${issues.length - shown.length} more` : "";
  return `${shown.join("; ")}${more}`;
}

export function createToolExecutor(options: ToolExecutorOptions): ToolExecutor {
  const now = options.now ?? (() => performance.now());
  const validator = createInputValidator();
  const callHttp = createHttpTool({
    allowlist: options.allowlist,
    privateHosts: options.allowPrivateFor ?? [],
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    resolve: options.lookup ?? resolveWithDns,
  });

  function checkInput(tool: ExecutableTool, input: unknown): void {
    let check: ReturnType<typeof validator.check>;
    try {
      check = validator.check(tool.inputSchema, input);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ToolFailure("invalid_tool_config", `the tool's inputSchema cannot be used: ${reason}`);
    }
    if (!check.ok) {
      throw new ToolFailure(
        "invalid_tool_input",
        `the input does not match the tool's inputSchema: ${summarize(check.issues)}`,
        {
          details: check.issues,
        },
      );
    }
  }

  async function outputOf(tool: ExecutableTool, input: unknown, signal: AbortSignal | undefined): Promise<JsonValue> {
    checkInput(tool, input);
    switch (tool.type) {
      case "manual_stub":
        return manualStubOutput(tool.config);
      case "http":
        return callHttp({
          config: tool.config,
          input,
          ...(tool.organizationId === undefined ? {} : { organizationId: tool.organizationId }),
          ...(signal ? { signal } : {}),
        });
      default:
        throw new ToolFailure("invalid_tool_config", `unknown tool type "${tool.type}"`);
    }
  }

  return {
    async execute(tool, input, context = {}) {
      context.signal?.throwIfAborted();
      const startedAt = now();
      const latencyMs = () => Math.max(0, Math.round(now() - startedAt));
      try {
        const output = await outputOf(tool, input, context.signal);
        return { output, latencyMs: latencyMs() };
      } catch (error) {
        if (!(error instanceof ToolFailure)) throw error;
        return { output: null, latencyMs: latencyMs(), error: error.error };
      }
    },
  };
}
