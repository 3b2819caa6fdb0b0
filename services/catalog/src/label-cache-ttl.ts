/**
 * A prompt label's default TTL for the response cache (docs/cache.md "Defaults"): runs through the
 * label use it when their request sends no Kiln-Cache header. The defaults of a prompt's labels,
 * `production` included (which is derived, not stored), are kept on the prompt document as one map
 * from label name to seconds, so a run's resolve reads them with the prompt it already reads.
 */
import { invalidArgument } from "@kiln/kit/errors";
import type { CatalogDeps } from "./catalog-deps.js";
import { Issues } from "./domain/issues.js";
import { checkCacheTtl } from "./domain/prompt-version.js";
import type { LabelKind, PromptDoc } from "./store/catalog-store.js";

/** What a label move asks of the label's default: set it, remove it, or (neither) keep it. */
export interface LabelTtlChange {
  cacheTtlSeconds?: number;
  clearCacheTtlSeconds?: boolean;
}

/** The map as a parent document holds it (absent on prompts without any, and on skills and agents). */
export interface WithLabelTtls {
  labelCacheTtlSeconds?: Readonly<Record<string, number>>;
}

/** The default of `label` on `parent`; undefined when it has none (an own key only: a label may be named "constructor"). */
export function labelTtlOf(parent: WithLabelTtls | null | undefined, label: string): number | undefined {
  const ttls = parent?.labelCacheTtlSeconds;
  if (!ttls || !Object.hasOwn(ttls, label)) return undefined;
  const value = ttls[label];
  return typeof value === "number" ? value : undefined;
}

/** 400 for a change the label cannot take: a bad value, set and clear at once, or a skill's or agent's label. */
export function checkLabelTtlChange(kind: LabelKind, change: LabelTtlChange): void {
  const issues = new Issues();
  const field = "cacheTtlSeconds";
  if (change.cacheTtlSeconds === undefined && !change.clearCacheTtlSeconds) return;
  if (kind !== "prompt") issues.add(field, `is for prompt labels only: ${kind} runs do not use the response cache`);
  else if (change.cacheTtlSeconds !== undefined && change.clearCacheTtlSeconds)
    issues.add(field, "cannot be set and cleared at once");
  else checkCacheTtl(issues, field, change.cacheTtlSeconds);
  if (issues.count > 0) throw invalidArgument("invalid cacheTtlSeconds", [...issues.all()]);
}

/**
 * Applies a checked change to the prompt's map and answers the prompt as it is now (unchanged
 * when the change asks nothing). The caller forgets the prompt's cached live entry.
 */
export async function applyLabelTtl(
  deps: CatalogDeps,
  prompt: PromptDoc,
  label: string,
  change: LabelTtlChange,
): Promise<PromptDoc> {
  const path = `labelCacheTtlSeconds.${label}`;
  const update =
    change.cacheTtlSeconds !== undefined
      ? { $set: { [path]: change.cacheTtlSeconds } }
      : change.clearCacheTtlSeconds
        ? { $unset: { [path]: "" as const } }
        : undefined;
  if (!update) return prompt;
  return (await deps.collections.prompts.findOneAndUpdate({ _id: prompt._id }, update)) ?? prompt;
}
