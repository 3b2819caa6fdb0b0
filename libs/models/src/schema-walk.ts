/** Walking a JSON Schema without following references: branches, anchors, extra properties. */
import type { JsonSchema } from "./provider.js";

export type Schema = JsonSchema | boolean;

/**
 * The first branch, passing over a bare `{ "type": "null" }` so nullable fields get a real value,
 * and over branches that lead back into a schema being expanded (so recursion can end).
 */
export function chooseBranch(branches: unknown[], refs: string[]): unknown {
  const finite = branches.filter((b) => !mentionsRef(b, refs));
  const candidates = finite.length > 0 ? finite : branches;
  return candidates.find((b) => !(isObject(b) && b.type === "null" && Object.keys(b).length === 1)) ?? candidates[0];
}

export function additionalSchema(schema: JsonSchema): Schema | undefined {
  const extra = schema.additionalProperties;
  return typeof extra === "boolean" || isObject(extra) ? (extra as Schema) : undefined;
}

/** Whether a schema (without following refs) names one of the refs being expanded. */
export function mentionsRef(schema: unknown, refs: string[]): boolean {
  if (Array.isArray(schema)) return schema.some((s) => mentionsRef(s, refs));
  if (!isObject(schema)) return false;
  if (typeof schema.$ref === "string" && refs.includes(schema.$ref)) return true;
  return Object.entries(schema).some(([key, value]) => key !== "const" && key !== "enum" && mentionsRef(value, refs));
}

export function findAnchor(node: unknown, anchor: string): Schema | undefined {
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = findAnchor(item, anchor);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isObject(node)) return undefined;
  if (node.$anchor === anchor) return node;
  for (const value of Object.values(node)) {
    const found = findAnchor(value, anchor);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
