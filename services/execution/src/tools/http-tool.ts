/**
 * Calls an `http` tool (api.md "Tools"), safe against server-side request forgery:
 * 1. the URL's host must be on the allowlist (`isUrlAllowed`, as the catalog checked it at save time);
 * 2. the host is resolved once and every address must be public, unless the host is explicitly
 *    allowed private addresses (IP literals reach here already normalized by the WHATWG URL
 *    parser: `2130706433`, `0x7f.1` and `127.1` all read `127.0.0.1`);
 * 3. the connection goes to those checked addresses and nowhere else (kit/src/outbound: the
 *    address rules, resolution and pinned request are shared with webhook deliveries);
 * 4. no redirects, one deadline for resolution, connection and response, a capped body.
 */
import type { OutgoingHttpHeaders } from "node:http";
import {
  checkedAddressesOf,
  isRedirect,
  OutboundFailure,
  type PinnedResponse,
  type ResolveHost,
  sendPinnedRequest,
} from "@kiln/kit/outbound";
import { type HostAllowlist, type HostPattern, isUrlAllowed } from "@kiln/kit/outbound/host-patterns";
import { type HttpToolConfig, parseHttpToolConfig, urlWithQuery } from "./http-tool-config.js";
import { type JsonValue, ToolFailure } from "./tool-failure.js";

export type { ResolveHost } from "@kiln/kit/outbound";
export { resolveWithDns } from "@kiln/kit/outbound";

export interface HttpToolOptions {
  allowlist: HostAllowlist;
  /** Hosts that may resolve to private, loopback or link-local addresses. */
  privateHosts: readonly HostPattern[];
  maxResponseBytes: number;
  resolve: ResolveHost;
}

export interface HttpToolCall {
  config: unknown;
  input: unknown;
  organizationId?: string;
  signal?: AbortSignal;
}

/** The output of a successful call: the parsed body when the response is JSON, else `{status, text}`. */
export type HttpToolCallFn = (call: HttpToolCall) => Promise<JsonValue>;

const USER_AGENT = "kiln-http-tool/1";
const MAX_ERROR_SNIPPET_CHARS = 300;

/** The kit's outbound failures are tool failures of the same code (tool-failure.ts lists them). */
function asToolFailure(error: unknown): unknown {
  return error instanceof OutboundFailure ? new ToolFailure(error.code, error.message) : error;
}

function requestOf(config: HttpToolConfig, input: unknown) {
  const url = config.method === "GET" ? urlWithQuery(config.url, input) : new URL(config.url);
  const headers: OutgoingHttpHeaders = {
    accept: "application/json, text/*;q=0.9, */*;q=0.8",
    "user-agent": USER_AGENT,
    ...(config.method === "POST" ? { "content-type": "application/json" } : {}),
    ...config.headers,
    host: url.host,
    "accept-encoding": "identity",
  };
  if (config.method === "GET") return { url, headers };
  const body = Buffer.from(JSON.stringify(input ?? null), "utf8");
  return { url, headers: { ...headers, "content-length": body.length }, body };
}

function mediaTypeOf(contentType: string | undefined) {
  const [type = "", ...params] = (contentType ?? "").split(";");
  const charset = params
    .map((p) => p.trim().match(/^charset\s*=\s*"?([^";\s]+)"?$/i)?.[1])
    .find((c) => c !== undefined);
  return { type: type.trim().toLowerCase(), charset };
}

function decode(body: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

function outputOf(response: PinnedResponse): JsonValue {
  const { status } = response;
  if (isRedirect(status)) {
    throw new ToolFailure("redirect_not_followed", `redirects are not followed (HTTP ${status})`, { status });
  }
  const { type, charset } = mediaTypeOf(response.headers["content-type"]);
  const text = decode(response.body, charset);
  if (status < 200 || status > 299) {
    const snippet = text.replace(/\s+/g, " ").trim().slice(0, MAX_ERROR_SNIPPET_CHARS);
    throw new ToolFailure("http_error", `HTTP ${status}${snippet === "" ? "" : `: ${snippet}`}`, { status });
  }
  const isJson = type === "application/json" || /^application\/[^/]+\+json$/.test(type);
  if (!isJson || text.trim() === "") return { status, text };
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new ToolFailure("invalid_response", `the response is labelled ${type} but is not valid JSON`);
  }
}

function networkFailure(host: string, error: unknown): ToolFailure {
  const code = (error as NodeJS.ErrnoException).code;
  return new ToolFailure("network_error", `could not call ${host}: ${code ?? "connection failed"}`);
}

export function createHttpTool(options: HttpToolOptions): HttpToolCallFn {
  const checkedAddresses = (url: URL, signal: AbortSignal) =>
    checkedAddressesOf(url, {
      privateHosts: options.privateHosts,
      resolve: options.resolve,
      signal,
      who: "http tools",
    }).catch((error: unknown) => {
      throw asToolFailure(error);
    });

  return async (call) => {
    const config = parseHttpToolConfig(call.config);
    const { url, headers, body } = requestOf(config, call.input);
    // The catalog decided with this same function when the tool was saved; rules may have changed since.
    if (!isUrlAllowed(options.allowlist, url, call.organizationId)) {
      throw new ToolFailure("host_not_allowed", `host "${url.hostname}" is not on the allowlist of this deployment`);
    }

    // One deadline for resolution, connection and response; the caller's abort cancels it too
    // and surfaces as the caller's own reason.
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new ToolFailure("timeout", `no response within ${config.timeoutMs} ms`)),
      config.timeoutMs,
    );
    const onCallerAbort = () => deadline.abort(call.signal?.reason);
    if (call.signal?.aborted) onCallerAbort();
    call.signal?.addEventListener("abort", onCallerAbort, { once: true });
    try {
      const addresses = await checkedAddresses(url, deadline.signal);
      const response = await sendPinnedRequest({
        url,
        method: config.method,
        headers,
        ...(body ? { body } : {}),
        addresses,
        maxResponseBytes: options.maxResponseBytes,
        signal: deadline.signal,
      }).catch((error: unknown) => {
        if (deadline.signal.aborted) throw deadline.signal.reason;
        throw error instanceof OutboundFailure ? asToolFailure(error) : networkFailure(url.hostname, error);
      });
      return outputOf(response);
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener("abort", onCallerAbort);
    }
  };
}
