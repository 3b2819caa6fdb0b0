import type { JsonText } from "@kiln/proto/common";
import { LIMITS } from "./limits.js";

/**
 * Free-form user JSON on the wire (`kiln.common.v1.JsonText`, proto/kiln/common/v1/json.proto): the
 * one way every service wraps a value into it and reads one out. Sizes are checked by field name in
 * every service's input interceptor (rpc/input-interceptor.ts) before a handler runs; what is
 * checked here, when the text is read, is that it is JSON and not nested past the limit.
 */
export type { JsonText };

/**
 * The message as a literal: what `create(JsonTextSchema, …)` makes for a one-field message, without
 * its walk over the schema on every run's input and output (`pnpm bench:cpu-embedded`).
 */
const message = (json: string): JsonText => ({ $typeName: "kiln.common.v1.JsonText", json });

/** The message carrying `value` as JSON text. */
export function jsonText(value: unknown): JsonText {
  return message(JSON.stringify(value) ?? "null");
}

/** The message carrying `value`, or unset when `value` is undefined. */
export function optionalJsonText(value: unknown): JsonText | undefined {
  return value === undefined ? undefined : jsonText(value);
}

/** The message carrying JSON text as it is (already serialized, or received). */
export function jsonTextOf(json: string): JsonText {
  return message(json);
}

/** The text a message carries; `fallback` when the field is unset. */
export function textOf(message: JsonText | undefined, fallback = ""): string {
  return message === undefined ? fallback : message.json;
}

export type ReadJson = { ok: true; value: unknown } | { ok: false; issue: string };

/** Reads JSON text at the boundary: valid JSON, nested at most `maxDepth` levels. */
export function readJson(text: string, maxDepth: number = LIMITS.bodyDepth): ReadJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, issue: "is not valid JSON" };
  }
  if (depthExceeds(value, maxDepth)) return { ok: false, issue: `is nested too deeply (at most ${maxDepth} levels)` };
  return { ok: true, value };
}

/** Reads the JSON a message carries (see readJson); an unset message reads as `undefined`. */
export function readJsonText(message: JsonText | undefined, maxDepth?: number): ReadJson {
  return message === undefined ? { ok: true, value: undefined } : readJson(message.json, maxDepth);
}

export function depthExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit === 0) return true;
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.some((child) => depthExceeds(child, limit - 1));
}
