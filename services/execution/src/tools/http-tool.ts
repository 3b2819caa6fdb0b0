/**
 * Calls an `http` tool (api.md "Tools"), safe against server-side request forgery:
 * 1. the URL's host must be on the allowlist (`isUrlAllowed`, as the catalog checked it at save time);
 * 2. the host is resolved once and every address must be public, unless the host is explicitly
 *    allowed private addresses (IP literals reach here already normalized by the WHATWG URL
 *    parser: `2130706433`, `0x7f.1` and `127.1` all read `127.0.0.1`);
 * 3. the connection goes to those checked addresses and nowhere else (`pinned-request.ts`);
 * 4. no redirects, one deadline for resolution, connection and response, a capped body.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { OutgoingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import { type HostAllowlist, type HostPattern, isUrlAllowed, urlMatchesAny } from "@kiln/kit/outbound/host-patterns";
import { classifyAddress } from "./address-policy.js";
import { type HttpToolConfig, parseHttpToolConfig, urlWithQuery } from "./http-tool-config.js";
import { bareHostname, isRedirect, type PinnedResponse, sendPinnedRequest } from "./pinned-request.js";
import { type JsonValue, ToolFailure } from "./tool-failure.js";

/** Every address of `hostname`, as `dns.lookup(hostname, {all: true})` gives them. */
export type ResolveHost = (hostname: string) => Promise<readonly LookupAddress[]>;

export const resolveWithDns: ResolveHost = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

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

/** Resolves with `promise`, or rejects with the signal's reason as soon as it aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function refusal(host: string, literal: boolean, range: string, who: string): ToolFailure {
  const subject = literal ? `address ${host} is` : `host "${host}" resolves to an address`;
  return new ToolFailure(
    "address_not_allowed",
    `${subject} in the "${range}" range; ${who} may only call public addresses unless the host is allowed private ones`,
  );
}

/**
 * Every address `url`'s host resolves to (once), each checked: none may be unroutable, and none
 * private, loopback or link-local unless the host matches `privateHosts`. The caller connects to
 * these and nowhere else (`sendPinnedRequest`). Shared by http tools and webhook deliveries.
 */
export async function checkedAddressesOf(
  url: URL,
  options: { privateHosts: readonly HostPattern[]; resolve: ResolveHost; signal: AbortSignal; who: string },
): Promise<LookupAddress[]> {
  const { signal } = options;
  const host = bareHostname(url);
  const literal = isIP(host) !== 0;
  let answers: readonly LookupAddress[];
  if (literal) answers = [{ address: host, family: isIP(host) }];
  else {
    try {
      answers = await abortable(options.resolve(host), signal);
    } catch {
      if (signal.aborted) throw signal.reason;
      throw new ToolFailure("network_error", `could not resolve host "${host}"`);
    }
  }
  if (answers.length === 0) throw new ToolFailure("network_error", `host "${host}" has no address`);
  const privateAllowed = urlMatchesAny(options.privateHosts, url);
  // One refused address refuses the host: the client could pick any of them.
  for (const { address } of answers) {
    const { scope, range } = classifyAddress(address);
    if (scope === "unroutable" || (scope === "internal" && !privateAllowed))
      throw refusal(host, literal, range, options.who);
  }
  return answers.map(({ address }) => ({ address, family: isIP(address) }));
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
        throw error instanceof ToolFailure ? error : networkFailure(url.hostname, error);
      });
      return outputOf(response);
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener("abort", onCallerAbort);
    }
  };
}
