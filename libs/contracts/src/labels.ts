/**
 * Label names shared by the catalog (which keeps labels) and identity (which keeps the
 * organization's protected labels): docs/labels.md.
 */

/** What a label name looks like (issue #17): lowercase, starts with a letter, at most 40 characters. */
export const LABEL_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** The live published version: publishing moves it, and moving it publishes. */
export const PRODUCTION = "production";

/** The newest version; read-only. */
export const LATEST = "latest";

/**
 * Names that cannot be labels: evaluation targets name versions by "draft" and "published"
 * beside labels, so a label of those names would be ambiguous there.
 */
export const RESERVED_LABELS: readonly string[] = ["draft", "published"];

/** What an organization protects until it says otherwise. */
export const DEFAULT_PROTECTED_LABELS: readonly string[] = [PRODUCTION];

/** Why `name` cannot be a label, or undefined when it can. */
export function labelNameIssue(name: string): string | undefined {
  if (!LABEL_NAME.test(name)) return "must match ^[a-z][a-z0-9-]{0,39}$";
  if (RESERVED_LABELS.includes(name)) return `"${name}" is reserved (an evaluation target)`;
  return undefined;
}
