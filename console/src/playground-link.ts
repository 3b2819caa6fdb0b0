/**
 * What opens the playground on something (a run, a version): `/playground?open=<kind>:<id>` with the
 * version to pick and the variables to fill, read once when the playground starts; or only the
 * variables (a dataset item's input: `/playground?variables=<json>`), over whatever is picked.
 */

export interface PlaygroundOpening {
  /** The target's key in the playground's pick: "prompt:<id>" or "skill:<id>"; "" to keep the pick. */
  key: string;
  /** The pick's selection: "v:<versionId>". */
  selection: string;
  /** The variables' fields as typed: text as it is, any other value as JSON. */
  values: Record<string, string>;
}

const asField = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** The playground's address for a prompt's or a skill's version, with these variables (or input). */
export function playgroundLink(
  kind: "prompt" | "skill",
  id: string,
  versionId: string,
  variables: Record<string, unknown> = {},
): string {
  const q = new URLSearchParams({ open: `${kind}:${id}`, version: versionId });
  if (Object.keys(variables).length > 0) q.set("variables", JSON.stringify(variables));
  return `/playground?${q}`;
}

/** The playground's address filling these variables into whatever it has picked. */
export const variablesLink = (variables: Record<string, unknown>) =>
  `/playground?${new URLSearchParams({ variables: JSON.stringify(variables) })}`;

/** What the address asks the playground to open, if it asks (a malformed part is left out). */
export function openingOf(search: string): PlaygroundOpening | null {
  const q = new URLSearchParams(search);
  const key = q.get("open") ?? "";
  const target = /^(prompt|skill):[a-z]+_[0-9a-f]+$/.test(key);
  if (!target && !q.has("variables")) return null;
  const version = q.get("version") ?? "";
  let values: Record<string, string> = {};
  try {
    const parsed = JSON.parse(q.get("variables") ?? "{}") as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      values = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, asField(v)]));
    }
  } catch {
    // Not JSON: the variables start empty.
  }
  return { key: target ? key : "", selection: target && version ? `v:${version}` : "", values };
}
