/**
 * The warm path of a run without a catalog call: what the catalog resolved (prompt and skill
 * versions with their tools) is kept with the catalog's change counter read before asking, and
 * answered again while the counter has not moved (@kiln/kit/bus/generation). The catalog moves it
 * after every write and before it answers, so a run that starts after a publish (or a label move,
 * an edit, an archive) has answered never gets what was live before — whichever replicas serve
 * them. A hit is authorized as the catalog authorizes a resolve (runs:write on the organization,
 * a resource the caller cannot see is not found); a bus that does not answer means no cache.
 */
import type { CallOptions, Client } from "@connectrpc/connect";
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import type { Generation } from "@kiln/kit/bus/generation";
import { kPrincipal } from "@kiln/kit/principal";
import type { CatalogService } from "@kiln/proto/catalog";
import { LRUCache } from "lru-cache";

const RUNS_WRITE = "runs:write";

export interface ResolveCacheDeps {
  catalog: Client<typeof CatalogService>;
  generation: Generation;
  identityAuth: IdentityAuth;
  /** Most answers kept; default 10 000. */
  maxEntries?: number;
  /** Most bytes of answers kept (strings counted at two bytes a character); default 32 MiB. */
  maxBytes?: number;
}

interface Entry {
  generation: number;
  answer: unknown;
}

/** The catalog client, with resolvePromptVersion and resolveSkillVersion answered from the cache when they can be. */
export function withResolveCache(deps: ResolveCacheDeps): Client<typeof CatalogService> {
  // Bounded by size too: prompts, schemas and tool configurations can be large, and the process's
  // heap is bounded (the image runs with a 128 MB old space).
  const entries = new LRUCache<string, Entry>({
    max: deps.maxEntries ?? 10_000,
    maxSize: deps.maxBytes ?? 32 * 1024 * 1024,
    sizeCalculation: (entry, key) => Math.max(1, approximateBytes(entry.answer) + key.length * 2),
  });
  const pending = new Map<string, Promise<unknown>>();

  function cached<Req extends { organizationId?: string }, Res>(
    what: string,
    call: (req: Req, options?: CallOptions) => Promise<Res>,
    keyOf: (req: Req) => string,
  ): (req: Req, options?: CallOptions) => Promise<Res> {
    return async (req, options) => {
      const principal = options?.contextValues?.get(kPrincipal);
      if (!principal) return call(req, options);
      let generation: number;
      try {
        generation = await deps.generation.current();
      } catch {
        return call(req, options);
      }
      const organizationId = req.organizationId ?? "";
      const key = `${what}\u0000${organizationId}\u0000${keyOf(req)}`;
      const flight = `${key}\u0000${generation}`;
      const hit = entries.get(key);
      const inFlight = pending.get(flight);
      if ((hit && hit.generation === generation) || inFlight) {
        await authorizeOnResource(deps.identityAuth, principal, organizationId, RUNS_WRITE, what);
        if (hit && hit.generation === generation) return hit.answer as Res;
        try {
          return (await inFlight) as Res;
        } catch {
          // Refused to the caller that asked (its own authorization, say): this one asks for itself.
          return call(req, options);
        }
      }
      // The catalog authorizes this one itself.
      const asked = call(req, options);
      pending.set(flight, asked);
      try {
        const answer = await asked;
        if ((entries.get(key)?.generation ?? -1) <= generation) entries.set(key, { generation, answer });
        return answer;
      } finally {
        pending.delete(flight);
      }
    };
  }

  return {
    ...deps.catalog,
    resolvePromptVersion: cached("prompt", deps.catalog.resolvePromptVersion, (r) =>
      [r.promptId, r.versionId, r.label].join("\u0000"),
    ),
    resolveSkillVersion: cached("skill", deps.catalog.resolveSkillVersion, (r) =>
      [r.skillId, r.versionId, r.label, r.preferDraft].join("\u0000"),
    ),
  };
}

/** About how many bytes a resolved answer holds: its strings (two bytes a character) and fields. */
export function approximateBytes(value: unknown, depth = 0): number {
  if (typeof value === "string") return 16 + value.length * 2;
  if (value === null || typeof value !== "object" || depth > 32) return 8;
  let bytes = 16;
  if (Array.isArray(value)) for (const item of value) bytes += approximateBytes(item, depth + 1);
  else for (const item of Object.values(value)) bytes += 8 + approximateBytes(item, depth + 1);
  return bytes;
}
