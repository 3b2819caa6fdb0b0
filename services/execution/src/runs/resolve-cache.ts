/**
 * The warm path of a run without a catalog call: what the catalog resolved (prompt and skill
 * versions with their tools) is kept with the catalog's change counter read before asking, and
 * answered again while the counter has not moved (@kiln/kit/bus/generation). The catalog moves it
 * after every write and before it answers, so a run that starts after a publish (or a label move,
 * an edit, an archive) has answered never gets what was live before — whichever replicas serve
 * them. A hit is authorized as the catalog authorizes a resolve (runs:write on the organization,
 * a resource the caller cannot see is not found); a bus that does not answer means no cache.
 *
 * The counter may be read as early as the run's call arrives (`readGenerationEarly`, before its
 * message is read and authenticated), in parallel with that work instead of after it: any read
 * that starts after the run started sees every write answered before the run started.
 */
import {
  type CallOptions,
  type Client,
  type ContextValues,
  createContextKey,
  createContextValues,
} from "@connectrpc/connect";
import { authorizeOnResource, type IdentityAuth } from "@kiln/kit/authorizer";
import type { Generation } from "@kiln/kit/bus/generation";
import { createCallCache } from "@kiln/kit/call-cache";
import { kPrincipal } from "@kiln/kit/principal";
import type { CatalogService } from "@kiln/proto/catalog";

const RUNS_WRITE = "runs:write";

/** The catalog's change counter, read since the call carrying it arrived. */
export const kGenerationRead = createContextKey<Promise<number> | undefined>(undefined, {
  description: "the catalog's change counter, read as the call arrived",
});

/**
 * Context values for a call arriving on `path` (ServiceModule.contextValues): the counter's read
 * starts now for the methods in `paths`. A read nobody awaits (the call refused before it resolves
 * anything) fails quietly; one that is awaited fails there, as `current()` would.
 */
export function readGenerationEarly(generation: Generation, paths: ReadonlySet<string>) {
  return (path: string): ContextValues => {
    const values = createContextValues();
    if (!paths.has(path)) return values;
    const read = generation.current();
    read.catch(() => undefined);
    return values.set(kGenerationRead, read);
  };
}

export interface ResolveCacheDeps {
  catalog: Client<typeof CatalogService>;
  generation: Generation;
  identityAuth: IdentityAuth;
  /** Most answers kept; default 10 000. */
  maxEntries?: number;
  /** Most bytes of answers kept (strings counted at two bytes a character); default 32 MiB. */
  maxBytes?: number;
}

/** The catalog client, with resolvePromptVersion and resolveSkillVersion answered from the cache when they can be. */
export function withResolveCache(deps: ResolveCacheDeps): Client<typeof CatalogService> {
  // Bounded by size too: prompts, schemas and tool configurations can be large, and the process's
  // heap is bounded (the image runs with a 128 MB old space).
  // Keyed by the counter too: an answer of an earlier counter is never asked for again and ages
  // out. One catalog call for concurrent misses of one key (createCallCache).
  const answers = createCallCache<{ answer: unknown }>({
    max: deps.maxEntries ?? 10_000,
    maxSize: deps.maxBytes ?? 32 * 1024 * 1024,
    sizeCalculation: (entry, key) => Math.max(1, approximateBytes(entry.answer) + key.length * 2),
  });

  function cached<Req extends { organizationId?: string; minGeneration?: bigint }, Res>(
    what: string,
    call: (req: Req, options?: CallOptions) => Promise<Res>,
    keyOf: (req: Req) => string,
  ): (req: Req, options?: CallOptions) => Promise<Res> {
    return async (req, options) => {
      const principal = options?.contextValues?.get(kPrincipal);
      if (!principal) return call(req, options);
      let generation: number;
      try {
        generation = await (options?.contextValues?.get(kGenerationRead) ?? deps.generation.current());
      } catch {
        return call(req, options);
      }
      const organizationId = req.organizationId ?? "";
      const key = `${what}\u0000${organizationId}\u0000${keyOf(req)}\u0000${generation}`;
      let asked = false;
      let found: { answer: unknown };
      try {
        found = await answers.get(key, async () => {
          asked = true;
          // Whichever catalog replica answers, it answers with what it read at this counter or later.
          const answer = await call({ ...req, minGeneration: BigInt(generation) }, options);
          return { answer };
        });
        // A catalog that does not say it read at this counter (one of before min_generation, during
        // a rolling deploy) is not kept for other runs.
        if (asked && !(Number((found.answer as Answered).generation ?? 0) >= generation)) answers.forget(key);
      } catch (e) {
        if (asked) throw e;
        // Refused to the caller that asked (its own authorization, say): this one asks for itself.
        return call(req, options);
      }
      // The catalog authorized the call this caller made; an answer made for another is authorized here.
      if (!asked) await authorizeOnResource(deps.identityAuth, principal, { organizationId, scope: RUNS_WRITE, what });
      return found.answer as Res;
    };
  }

  const resolvePrompt = cached("prompt", deps.catalog.resolvePromptVersion, (r) =>
    [r.promptId, r.versionId, r.label].join("\u0000"),
  );
  return {
    ...deps.catalog,
    // An unsaved version (a draft) is resolved each time: it is nobody else's.
    resolvePromptVersion: (req, options) =>
      req.draft ? deps.catalog.resolvePromptVersion(req, options) : resolvePrompt(req, options),
    resolveSkillVersion: cached("skill", deps.catalog.resolveSkillVersion, (r) =>
      [r.skillId, r.versionId, r.label, r.preferDraft].join("\u0000"),
    ),
  };
}

/** What a resolve answers beside the version: the change counter it is current at. */
interface Answered {
  generation?: bigint;
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
