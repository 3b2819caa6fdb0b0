/**
 * Tool types and their configuration (docs/concepts.md "Tool", api.md "Tools"). `manual_stub` returns a
 * fixed `result`; `http` calls a URL whose host is on the deployment's allowlist. The host is
 * checked here when a tool is saved, with the same function (`isUrlAllowed`) that execution uses
 * when the tool is called; execution also checks the resolved addresses.
 */
import { EMPTY_HOST_ALLOWLIST, type HostAllowlist, isUrlAllowed } from "@kiln/kit/outbound/host-patterns";
import { fieldPath, type Issues } from "./issues.js";
import { isJsonObject, type JsonValue } from "./json-schema.js";

export const TOOL_TYPES = ["manual_stub", "http"] as const;
export type ToolType = (typeof TOOL_TYPES)[number];

export const TOOL_KEY_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
export const MAX_HTTP_TIMEOUT_MS = 10_000;
const HTTP_METHODS = ["GET", "POST"];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the HTTP client sets itself; a tool may not override them. */
const RESERVED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection"]);

export function isToolType(value: string): value is ToolType {
  return (TOOL_TYPES as readonly string[]).includes(value);
}

/** Hosts `http` tools may call: the platform's one allowlist type (kit/outbound/host-patterns). */
export type HttpAllowlist = HostAllowlist;

export const EMPTY_ALLOWLIST: HttpAllowlist = EMPTY_HOST_ALLOWLIST;

function refuseUnknownKeys(
  issues: Issues,
  field: string,
  config: Record<string, unknown>,
  known: string[],
  type: string,
) {
  for (const key of Object.keys(config)) {
    if (!known.includes(key)) issues.add(fieldPath(field, key), `is not a setting of ${type} tools`);
  }
}

function checkHttpUrl(issues: Issues, field: string, value: unknown, allowlist: HttpAllowlist, organizationId: string) {
  if (typeof value !== "string" || value === "") {
    issues.add(field, "is required");
    return;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    issues.add(field, "must be an absolute http or https URL");
    return;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") issues.add(field, "must use http or https");
  else if (url.username !== "" || url.password !== "") issues.add(field, "must not contain credentials");
  else if (!isUrlAllowed(allowlist, url, organizationId)) {
    issues.add(field, `host "${url.hostname}" is not on the allowlist of this deployment`);
  }
}

export interface ToolConfigContext {
  allowlist: HttpAllowlist;
  /** The organization that owns the tool (the allowlist may be narrowed per organization). */
  organizationId: string;
}

/** Checks the configuration of a tool of `type`; issues are named under `field` (`config.url`). */
export function checkToolConfig(
  issues: Issues,
  field: string,
  type: ToolType,
  config: JsonValue,
  context: ToolConfigContext,
): void {
  if (!isJsonObject(config)) {
    issues.add(field, "must be an object");
    return;
  }
  if (type === "manual_stub") {
    refuseUnknownKeys(issues, field, config, ["result"], type);
    if (!Object.hasOwn(config, "result")) issues.add(fieldPath(field, "result"), "is required");
    else if (!isJsonObject(config.result)) issues.add(fieldPath(field, "result"), "must be an object");
    return;
  }
  refuseUnknownKeys(issues, field, config, ["url", "method", "headers", "timeoutMs"], type);
  checkHttpUrl(
    issues,
    fieldPath(field, "url"),
    Object.hasOwn(config, "url") ? config.url : undefined,
    context.allowlist,
    context.organizationId,
  );
  const method = Object.hasOwn(config, "method") ? config.method : undefined;
  if (method === undefined) issues.add(fieldPath(field, "method"), "is required");
  else if (typeof method !== "string" || !HTTP_METHODS.includes(method)) {
    issues.add(fieldPath(field, "method"), `must be one of ${HTTP_METHODS.join(", ")}`);
  }
  if (Object.hasOwn(config, "headers")) {
    const headers = config.headers;
    const headersField = fieldPath(field, "headers");
    if (!isJsonObject(headers)) issues.add(headersField, "must be an object of header names to strings");
    else {
      for (const [name, value] of Object.entries(headers)) {
        const at = fieldPath(headersField, name);
        if (!HEADER_NAME.test(name)) issues.add(at, "is not a valid header name");
        else if (RESERVED_HEADERS.has(name.toLowerCase()))
          issues.add(at, "is set by the HTTP client and cannot be configured");
        else if (typeof value !== "string") issues.add(at, "must be a string");
        else if (/[\r\n\0]/.test(value)) issues.add(at, "must not contain line breaks or NUL characters");
      }
    }
  }
  if (Object.hasOwn(config, "timeoutMs")) {
    const timeoutMs = config.timeoutMs;
    if (
      typeof timeoutMs !== "number" ||
      !Number.isInteger(timeoutMs) ||
      timeoutMs < 1 ||
      timeoutMs > MAX_HTTP_TIMEOUT_MS
    ) {
      issues.add(fieldPath(field, "timeoutMs"), `must be an integer from 1 to ${MAX_HTTP_TIMEOUT_MS}`);
    }
  }
}
