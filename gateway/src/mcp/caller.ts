import { type CallOptions, createContextValues } from "@connectrpc/connect";
import { DomainError } from "@kiln/kit/errors";
import { kPrincipal, kRequestId, type Principal } from "@kiln/kit/principal";
import { IDEMPOTENCY_KEY_HEADER } from "@kiln/kit/rpc/idempotency";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";

/**
 * Who makes an MCP request: the API key the HTTP request authenticated (the gateway's own
 * authentication, as for every REST route), carried to the MCP handlers as the SDK's AuthInfo.
 */

export type ApiKeyPrincipal = Extract<Principal, { type: "api_key" }>;

export interface McpCaller {
  principal: ApiKeyPrincipal;
  requestId: string;
  /** The labels whose versions prompts/list also offers, as `name@label` (the `labels` query parameter). */
  promptLabels: string[];
}

function isApiKeyPrincipal(value: unknown): value is ApiKeyPrincipal {
  if (value === null || typeof value !== "object") return false;
  const p = value as Partial<ApiKeyPrincipal>;
  return p.type === "api_key" && typeof p.organizationId === "string" && Array.isArray(p.scopes);
}

/** The AuthInfo handed to the transport with one HTTP request. */
export function authInfoOf(caller: McpCaller): AuthInfo {
  return {
    token: caller.principal.id,
    clientId: caller.principal.id,
    scopes: caller.principal.scopes,
    extra: { principal: caller.principal, requestId: caller.requestId, promptLabels: caller.promptLabels },
  };
}

/** The caller of the MCP request being handled. */
export function callerOf(extra: { authInfo?: AuthInfo }): McpCaller {
  const info = extra.authInfo?.extra;
  if (!info || !isApiKeyPrincipal(info.principal)) throw new DomainError("unauthenticated", "missing credentials");
  const labels = Array.isArray(info.promptLabels) ? info.promptLabels.filter((l) => typeof l === "string") : [];
  return {
    principal: info.principal,
    requestId: typeof info.requestId === "string" ? info.requestId : "",
    promptLabels: labels,
  };
}

export const hasScope = (caller: McpCaller, scope: string) => caller.principal.scopes.includes(scope);

/** Call options carrying the caller to a service, as the REST routes' rpcOptions do. */
export function callOptions(caller: McpCaller, options: { idempotencyKey?: string; signal?: AbortSignal } = {}) {
  const values = createContextValues().set(kRequestId, caller.requestId).set(kPrincipal, caller.principal);
  const call: CallOptions = { contextValues: values, signal: options.signal };
  if (options.idempotencyKey) call.headers = { [IDEMPOTENCY_KEY_HEADER]: options.idempotencyKey };
  return call;
}
