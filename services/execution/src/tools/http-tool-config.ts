/**
 * The configuration of an `http` tool (api.md "Tools": `{url, method: "GET" | "POST", headers?,
 * timeoutMs? (≤ 10000)}`) as the executor uses it. The catalog checked it when the version was
 * saved; it is checked again here because a stored version outlives a change of the rules.
 */
import type { FieldIssue } from "@kiln/kit/errors";
import { ToolFailure } from "./tool-failure.js";

export const MAX_HTTP_TIMEOUT_MS = 10_000;

export interface HttpToolConfig {
  url: URL;
  method: "GET" | "POST";
  /** Lower-cased names. */
  headers: Record<string, string>;
  timeoutMs: number;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, space, tab and Latin-1: what Node accepts in a header value, minus CR, LF and NUL. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/**
 * Headers the client sets itself: hop-by-hop headers (RFC 9110 §7.6.1), framing, the target host,
 * and the encoding (responses are read uncompressed, so the size limit is the size on the wire).
 */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "accept-encoding",
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** The config of an `http` tool, checked; throws `invalid_tool_config` listing every problem. */
export function parseHttpToolConfig(config: unknown): HttpToolConfig {
  const issues: FieldIssue[] = [];
  const add = (field: string, issue: string) => issues.push({ field: `config.${field}`, issue });
  if (!isObject(config)) throw new ToolFailure("invalid_tool_config", "the tool's config is not an object");

  let url: URL | undefined;
  const rawUrl = own(config, "url");
  if (typeof rawUrl !== "string") add("url", "is required");
  else if (!URL.canParse(rawUrl)) add("url", "must be an absolute http or https URL");
  else {
    url = new URL(rawUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") add("url", "must use http or https");
    else if (url.username !== "" || url.password !== "") add("url", "must not contain credentials");
  }

  const method = own(config, "method");
  if (method !== "GET" && method !== "POST") add("method", "must be GET or POST");

  // No prototype: a header may be named `__proto__` (a valid token) and must stay a plain entry.
  const headers: Record<string, string> = Object.create(null);
  const rawHeaders = own(config, "headers");
  if (rawHeaders !== undefined) {
    if (!isObject(rawHeaders)) add("headers", "must be an object of header names to strings");
    else {
      // Values may be secrets: issues name the header, never its value.
      for (const [name, value] of Object.entries(rawHeaders)) {
        const lower = name.toLowerCase();
        if (!HEADER_NAME.test(name)) add(`headers.${name}`, "is not a valid header name");
        else if (RESERVED_HEADERS.has(lower))
          add(`headers.${name}`, "is set by the HTTP client and cannot be configured");
        else if (typeof value !== "string") add(`headers.${name}`, "must be a string");
        else if (!HEADER_VALUE.test(value))
          add(`headers.${name}`, "must not contain line breaks or control characters");
        else if (Object.hasOwn(headers, lower)) add(`headers.${name}`, "is set twice");
        else headers[lower] = value;
      }
    }
  }

  let timeoutMs = MAX_HTTP_TIMEOUT_MS;
  const rawTimeout = own(config, "timeoutMs");
  if (rawTimeout !== undefined) {
    if (typeof rawTimeout !== "number" || !Number.isInteger(rawTimeout) || rawTimeout < 1) {
      add("timeoutMs", "must be a positive integer");
    } else timeoutMs = Math.min(rawTimeout, MAX_HTTP_TIMEOUT_MS);
  }

  if (issues.length > 0 || url === undefined) {
    const summary = issues.map((i) => `${i.field} ${i.issue}`).join("; ");
    throw new ToolFailure("invalid_tool_config", `the tool's config is invalid: ${summary}`, { details: issues });
  }
  return { url, method: method as "GET" | "POST", headers, timeoutMs };
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

/**
 * The URL a GET call requests: the configured URL with the input's fields appended as query
 * parameters (scalars as they are, anything else as JSON). A field may not replace a parameter the
 * configured URL fixes (an API key, say): that is refused rather than guessed at.
 */
export function urlWithQuery(url: URL, input: unknown): URL {
  const target = new URL(url);
  if (input === undefined || input === null) return target;
  if (!isObject(input)) throw new ToolFailure("invalid_tool_input", "the input of a GET tool must be an object");
  for (const [name, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (url.searchParams.has(name)) {
      throw new ToolFailure("invalid_tool_input", `input.${name} collides with a query parameter of the tool's URL`, {
        details: [{ field: `input.${name}`, issue: "collides with a query parameter of the tool's URL" }],
      });
    }
    target.searchParams.append(name, isScalar(value) ? String(value) : JSON.stringify(value));
  }
  return target;
}
