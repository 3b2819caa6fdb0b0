import type { ShownError } from "./api.js";

/** A JSON object typed by a person, or the message to show them when it is not one. */
export function parseObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw { message: `${what} is not JSON: ${(e as Error).message}`, fields: {} } satisfies ShownError;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw { message: `${what} must be a JSON object`, fields: {} } satisfies ShownError;
  return value as Record<string, unknown>;
}
