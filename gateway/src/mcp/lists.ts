import type { CallOptions } from "@connectrpc/connect";
import { DomainError } from "@kiln/kit/errors";
import { domainErrorOf } from "@kiln/kit/rpc/errors";
import { callOptions, hasScope, type McpCaller } from "./caller.js";

/** How many prompts, skills or agents one list answer holds at most (docs/mcp.md "Limits"). */
export const MAX_LISTED = 500;
const PAGE = 100;

/** Every page of a catalog list, up to MAX_LISTED items. */
async function collectPages<T>(
  page: (cursor: string, limit: number) => Promise<{ items: T[]; nextCursor: string }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor = "";
  do {
    const r = await page(cursor, PAGE);
    items.push(...r.items);
    cursor = r.nextCursor;
  } while (cursor !== "" && items.length < MAX_LISTED);
  return items.slice(0, MAX_LISTED);
}

/** What a catalog list RPC is asked: a page of the caller's organization. */
export interface ListRequest {
  organizationId: string;
  cursor: string;
  limit: number;
}

/**
 * Every item of one catalog list for the caller (up to MAX_LISTED), when it holds every one of
 * `scopes`; none otherwise. `list` asks one page and answers its items and next cursor.
 */
export async function listedFor<T>(
  caller: McpCaller,
  scopes: string[],
  list: (request: ListRequest, options: CallOptions) => Promise<{ items: T[]; nextCursor: string }>,
): Promise<T[]> {
  if (!scopes.every((scope) => hasScope(caller, scope))) return [];
  const options = callOptions(caller);
  const organizationId = caller.principal.organizationId;
  return collectPages((cursor, limit) => list({ organizationId, cursor, limit }, options));
}

/** A JSON text of a catalog message as a value; null when unset or empty. */
export function jsonOf(text: string | undefined): unknown {
  return text === undefined || text === "" ? null : JSON.parse(text);
}

/** A JSON Schema object of type object, else undefined (MCP's input and output schemas are objects). */
export function objectSchemaOf(text: string | undefined): Record<string, unknown> | undefined {
  const schema = jsonOf(text);
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return undefined;
  const record = schema as Record<string, unknown>;
  return record.type === "object" ? record : undefined;
}

/** The service's error as a domain error (internal ones stay as thrown). */
export function asDomainError(error: unknown): DomainError | undefined {
  return error instanceof DomainError ? error : domainErrorOf(error);
}

/** MCP names of tools: letters, digits and `_` (what every client's function names accept). */
export function slugOf(name: string): string {
  return name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 60);
}
