/** Canonical JSON text: object keys sorted, so two equal values give the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? "undefined";
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === "object" && value !== null) {
    const object = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(object)
        .sort()
        .map((k) => [k, sortKeys(object[k])]),
    );
  }
  return value;
}

/** Deep equality of JSON values (key order does not matter, array order does). */
export const jsonEquals = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

export type Parsed = { ok: true; value: unknown } | { ok: false };

export function tryParseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
