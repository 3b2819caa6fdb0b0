/**
 * Contract breaks between a skill's published version (before) and its draft (after): what a
 * caller of the published skill relied on that the draft no longer honours. Inputs may only get
 * looser, outputs only tighter. Paths are JSON Pointers into the instance ("" is the root).
 */
import { isPlainObject } from "./json-value.js";

export type BreakingChangeKind =
  | "input_required_added"
  | "input_type_changed"
  | "output_field_removed"
  | "output_type_changed";

export interface BreakingChange {
  kind: BreakingChangeKind;
  path: string;
  message: string;
}

/** The JSON types a schema allows; "any" when it does not say. */
function typesOf(schema: unknown): Set<string> | "any" {
  if (!isPlainObject(schema)) return "any";
  const type = schema.type;
  if (typeof type === "string") return new Set([type]);
  if (Array.isArray(type) && type.every((t) => typeof t === "string")) return new Set(type as string[]);
  return "any";
}

/** Does `wide` allow every type `narrow` allows? ("number" allows "integer".) */
function allows(wide: Set<string> | "any", narrow: Set<string> | "any"): boolean {
  if (wide === "any") return true;
  if (narrow === "any") return false;
  return [...narrow].every((t) => wide.has(t) || (t === "integer" && wide.has("number")));
}

const typeText = (types: Set<string> | "any") => (types === "any" ? "any type" : [...types].sort().join(" | "));
const pointerSegment = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");
const where = (side: "input" | "output", path: string) => (path === "" ? `the ${side}` : `${side} ${path}`);

/** A type change on each side: its kind, and the verbs of its message. */
const TYPE_CHANGES = {
  input: { kind: "input_type_changed", was: "accepted", now: "accepts" },
  output: { kind: "output_type_changed", was: "was", now: "gives" },
} as const;

function propertiesOf(schema: unknown): Record<string, unknown> {
  return isPlainObject(schema) && isPlainObject(schema.properties) ? schema.properties : {};
}

function requiredOf(schema: unknown): Set<string> {
  const required = isPlainObject(schema) ? schema.required : undefined;
  return new Set(Array.isArray(required) ? required.filter((r): r is string => typeof r === "string") : []);
}

function walk(side: "input" | "output", before: unknown, after: unknown, path: string, out: BreakingChange[]): void {
  const beforeTypes = typesOf(before);
  const afterTypes = typesOf(after);
  // An input may only get looser (the draft allows what was allowed), an output only tighter.
  const typeChange = TYPE_CHANGES[side];
  if (side === "input" ? !allows(afterTypes, beforeTypes) : !allows(beforeTypes, afterTypes)) {
    out.push({
      kind: typeChange.kind,
      path,
      message: `${where(side, path)} ${typeChange.was} ${typeText(beforeTypes)}, the draft ${typeChange.now} ${typeText(afterTypes)}`,
    });
    return;
  }
  const beforeProps = propertiesOf(before);
  const afterProps = propertiesOf(after);
  if (side === "input") {
    const wasRequired = requiredOf(before);
    for (const name of requiredOf(after)) {
      if (!wasRequired.has(name))
        out.push({
          kind: "input_required_added",
          path: `${path}/${pointerSegment(name)}`,
          message: `input ${path}/${pointerSegment(name)} is required by the draft`,
        });
    }
  } else {
    for (const name of Object.keys(beforeProps)) {
      if (!Object.hasOwn(afterProps, name))
        out.push({
          kind: "output_field_removed",
          path: `${path}/${pointerSegment(name)}`,
          message: `output ${path}/${pointerSegment(name)} is no longer in the draft's output`,
        });
    }
  }
  for (const name of Object.keys(beforeProps)) {
    if (Object.hasOwn(afterProps, name))
      walk(side, beforeProps[name], afterProps[name], `${path}/${pointerSegment(name)}`, out);
  }
  const beforeItems = isPlainObject(before) ? before.items : undefined;
  const afterItems = isPlainObject(after) ? after.items : undefined;
  if (isPlainObject(beforeItems) && isPlainObject(afterItems)) walk(side, beforeItems, afterItems, `${path}/*`, out);
}

export interface VersionSchemas {
  inputSchema: unknown;
  outputSchema: unknown;
}

export function breakingChangesOf(published: VersionSchemas, draft: VersionSchemas): BreakingChange[] {
  const out: BreakingChange[] = [];
  walk("input", published.inputSchema, draft.inputSchema, "", out);
  walk("output", published.outputSchema, draft.outputSchema, "", out);
  return out;
}
