/**
 * How a partial tag names a prompt (api.md "Partials"), read alike by the catalog (which resolves
 * it) and the execution service (which renders it): `{{> name}}` is the prompt `name` at its
 * `production` label, `{{> name@label}}` at `label`; the last `@` separates the label.
 */
import { PRODUCTION } from "./labels.js";

/** One prompt a version includes: a name and the label it is read at. */
export interface PromptInclude {
  name: string;
  label: string;
}

/** A tag's reference as written (`name`, `name@label`) as the prompt and label it names. */
export function includeOf(reference: string): PromptInclude {
  const at = reference.lastIndexOf("@");
  if (at <= 0) return { name: reference, label: PRODUCTION };
  return { name: reference.slice(0, at), label: reference.slice(at + 1) };
}

/** How an include is written back: `name`, or `name@label` for a label other than production. */
export const referenceOf = (include: PromptInclude): string =>
  include.label === PRODUCTION ? include.name : `${include.name}@${include.label}`;

/** The one key of an include, however it was written (`a` and `a@production` are one). */
export const includeKey = (include: PromptInclude): string => `${include.label}\u0000${include.name}`;

/** What each `{{> name}}` tag stands for, from the included texts by includeKey: undefined for one not included. */
export const partialLookupOf =
  (texts: ReadonlyMap<string, string>) =>
  (reference: string): string | undefined =>
    texts.get(includeKey(includeOf(reference)));
