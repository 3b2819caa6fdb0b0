/**
 * Prompt partials (api.md "Partials"): `{{> name}}` in a version's text includes the prompt named
 * `name` (of the same organization) at its `production` label, `{{> name@label}}` at another one.
 * What a reference stands for is decided when it is used (a run), so a label move of the included
 * prompt is seen by the next run; what is checked when a version is created, published or labelled
 * is that the includes make no cycle and nest at most MAX_INCLUDE_DEPTH deep. Pure: the reads are
 * the caller's `IncludeLookup`.
 */
import { labelNameIssue } from "@kiln/contracts/labels";
import { includeKey, includeOf, type PromptInclude, referenceOf } from "@kiln/contracts/partials";
import { MAX_PARTIAL_DEPTH } from "@kiln/contracts/prompt-template";
import { LIMITS } from "@kiln/kit/limits";

/** Includes nest at most this deep: a version's own are depth 1, theirs depth 2, … */
export const MAX_INCLUDE_DEPTH = MAX_PARTIAL_DEPTH;

/** Why a tag's reference cannot name a prompt and label, or undefined when it can. */
export function includeIssue(reference: string): string | undefined {
  const { name, label } = includeOf(reference);
  if (name.trim() === "") return "names no prompt";
  if (name.length > LIMITS.nameChars) return `a prompt name is at most ${LIMITS.nameChars} characters`;
  const issue = labelNameIssue(label);
  return issue ? `the label "${label}" ${issue}` : undefined;
}

/** What an include stands for now: a version of a prompt, its text and its own includes. */
export interface IncludedVersion {
  promptId: string;
  versionId: string;
  version: number;
  /** The text the tag is replaced with (a template, rendered with the including run's variables). */
  template: string;
  includes: readonly PromptInclude[];
}

/** Why an include stands for nothing now; `promptId` when its prompt exists (its label does not). */
export interface MissingInclude {
  missing: string;
  promptId?: string;
}

export type IncludeLookup = (include: PromptInclude) => Promise<IncludedVersion | MissingInclude>;

/** A cycle or a chain too deep, as a path of references from the root's name: `a -> b -> a`. */
export interface IncludeProblem {
  kind: "cycle" | "depth";
  path: string[];
  /** The root's own include the path starts with. */
  first: PromptInclude;
}

export interface IncludeWalk {
  /** Every include met (the root's and theirs, each once by includeKey), with what it stands for. */
  resolved: Map<string, { include: PromptInclude; version: IncludedVersion }>;
  /** The first include met that stands for nothing, and why. */
  missing?: { include: PromptInclude; reason: string };
  problem?: IncludeProblem;
}

/**
 * Why a run of the walked version cannot render (its error `unresolved_partial`), or undefined:
 * the walk's cycle or chain too deep, else the first include that stands for nothing.
 */
export function unresolvedOf(walk: IncludeWalk): { reference: string; message: string } | undefined {
  if (walk.problem)
    return { reference: referenceOf(walk.problem.first), message: describeProblem(walk.problem).message };
  if (!walk.missing) return undefined;
  const reference = referenceOf(walk.missing.include);
  return { reference, message: `the partial {{> ${reference}}} does not resolve: ${walk.missing.reason}` };
}

/** `a -> b -> a`: how a problem's path reads in a message. */
export const pathText = (problem: IncludeProblem): string => problem.path.join(" -> ");

/** The message and issue that name a problem (api.md "Partials"). */
export function describeProblem(problem: IncludeProblem): { message: string; issue: string } {
  const path = pathText(problem);
  return problem.kind === "cycle"
    ? { message: `the includes make a cycle: ${path}`, issue: `makes a cycle of includes: ${path}` }
    : {
        message: `the includes nest deeper than ${MAX_INCLUDE_DEPTH}: ${path}`,
        issue: `nests includes deeper than ${MAX_INCLUDE_DEPTH}: ${path}`,
      };
}

/**
 * Walks the includes of a version of the prompt `root` depth first, each include read once. A
 * prompt met again on its own path (the root included, whatever the label) is a cycle; a chain of
 * more than MAX_INCLUDE_DEPTH includes is too deep; the first of either is the walk's problem, and
 * the walk stops there. An include that stands for nothing is noted and not followed.
 */
export async function walkIncludes(
  root: { promptId: string; name: string },
  includes: readonly PromptInclude[],
  lookup: IncludeLookup,
): Promise<IncludeWalk> {
  const walk: IncludeWalk = { resolved: new Map() };
  const read = new Map<string, Promise<IncludedVersion | MissingInclude>>();
  const readOnce = (include: PromptInclude) => {
    const key = includeKey(include);
    let found = read.get(key);
    if (!found) {
      found = lookup(include);
      read.set(key, found);
    }
    return found;
  };
  // The longest chain of references below an include already walked whole, by includeKey.
  const below = new Map<string, string[]>();
  const onPath = [root.promptId];
  const names = [root.name];

  /** The longest chain below `list`, or undefined once the walk has its problem. */
  async function visit(
    list: readonly PromptInclude[],
    first: PromptInclude | undefined,
  ): Promise<string[] | undefined> {
    let longest: string[] = [];
    for (const include of list) {
      const start = first ?? include;
      const reference = referenceOf(include);
      const found = await readOnce(include);
      // A prompt met again on its path is a cycle, even at a label it does not have (yet).
      if (found.promptId !== undefined && onPath.includes(found.promptId)) {
        walk.problem = { kind: "cycle", path: [...names, reference], first: start };
        return undefined;
      }
      if ("missing" in found) {
        walk.missing ??= { include, reason: found.missing };
        continue;
      }
      walk.resolved.set(includeKey(include), { include, version: found });
      // `names` holds the root and the includes above this one: this one is at depth names.length.
      if (names.length > MAX_INCLUDE_DEPTH) {
        walk.problem = { kind: "depth", path: [...names, reference], first: start };
        return undefined;
      }
      let chain = below.get(includeKey(include));
      if (!chain) {
        onPath.push(found.promptId);
        names.push(reference);
        const inner = await visit(found.includes, start);
        onPath.pop();
        names.pop();
        if (!inner) return undefined;
        chain = inner;
        below.set(includeKey(include), chain);
      }
      if (names.length + chain.length > MAX_INCLUDE_DEPTH) {
        walk.problem = { kind: "depth", path: [...names, reference, ...chain], first: start };
        return undefined;
      }
      if (chain.length + 1 > longest.length) longest = [reference, ...chain];
    }
    return longest;
  }

  await visit(includes, undefined);
  return walk;
}
