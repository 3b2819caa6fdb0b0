/**
 * The deployment's per-model settings written as JSON maps by "<provider>/<model>" or
 * "<provider>/*" (MODEL_CONCURRENCY, MODEL_TOKENS_PER_MINUTE), and the schema problems of a
 * configuration value named by their path ("…[0].models[1].model must be string"); values, keys
 * included, never appear in a problem.
 */
import { MAX_TOKENS_PER_MINUTE } from "@kiln/contracts/token-limits";
import { Type } from "@kiln/kit/config";
import type { TSchema } from "typebox";
import Value from "typebox/value";

const MODEL_KEY = /^[a-z0-9][a-z0-9_-]{0,31}\/\S+$/;

export const ModelConcurrencySchema = Type.Record(Type.String(), Type.Integer({ minimum: 1, maximum: 10_000 }));
export const ModelTokensPerMinuteSchema = Type.Record(
  Type.String(),
  Type.Integer({ minimum: 1, maximum: MAX_TOKENS_PER_MINUTE }),
);

/** A JSON object of model keys to numbers; {} (and its problems added) when it is not one. */
export function parseModelMap(
  name: string,
  text: string | undefined,
  schema: TSchema,
  problems: string[],
): Record<string, number> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    problems.push(`${name} is not valid JSON`);
    return {};
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push(`${name} must be an object of "<provider>/<model>" (or "<provider>/*") to a number`);
    return {};
  }
  const keyProblem = (key: string) =>
    `${name} key "${key.slice(0, 80)}" must be "<provider>/<model>" or "<provider>/*"`;
  const badKeys = Object.keys(value).filter((key) => !MODEL_KEY.test(key));
  const found = [...badKeys.map(keyProblem), ...problemsByPath(schema, value, name)];
  problems.push(...found);
  return found.length > 0 ? {} : (value as Record<string, number>);
}

export function problemsByPath(schema: TSchema, value: unknown, prefix: string): string[] {
  const byPath = new Map<string, { messages: string[]; allowed: unknown[] }>();
  for (const error of Value.Errors(schema, value)) {
    if (error.keyword === "additionalProperties") continue; // reported per field below
    const path = prefix + pathOf(error.instancePath);
    const entry = byPath.get(path) ?? { messages: [], allowed: [] };
    byPath.set(path, entry);
    if (error.keyword === "boolean") entry.messages.push("is not a known field");
    else if (error.keyword === "const") entry.allowed.push((error.params as { allowedValue?: unknown }).allowedValue);
    else if (error.keyword !== "anyOf") entry.messages.push(error.message);
  }
  return [...byPath].map(([path, { messages, allowed }]) =>
    allowed.length > 0 && messages.length === 0
      ? `${path} must be one of ${allowed.join(", ")}`
      : `${path} ${messages.join(" or ")}`,
  );
}

/** "/0/models/1/model" → "[0].models[1].model". */
function pathOf(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join("");
}
