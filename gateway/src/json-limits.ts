import { type JsonText, jsonTextOf as jsonTextMessage } from "@kiln/kit/json-text";
import { bytesText } from "@kiln/kit/limits";
import type { ErrorObject, Plugin, SchemaValidateFunction } from "ajv";

const texts = new WeakMap<object, string>();

/**
 * The JSON text of a request's free-form value, made once: the size check below measures it and
 * the route sends the same text to the service (a run's variables were serialized twice).
 */
export function jsonTextOf(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "";
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    texts.set(value, text);
  }
  return text;
}

/** The schema keyword that bounds a free-form JSON field by the size of its JSON text. */
export const MAX_JSON_BYTES = "x-maxJsonBytes";

/**
 * An Ajv plugin (Fastify's `ajv.plugins`): `{"x-maxJsonBytes": 65536}` refuses a value whose JSON
 * text is longer than that many UTF-8 bytes, with the field's path and the limit in the issue
 * (docs/api.md "Limits"). The OpenAPI document shows the keyword as an extension.
 */
export const jsonBytesKeyword: Plugin<unknown> = (ajv) => {
  const check: SchemaValidateFunction = (max: number, data: unknown) => {
    const text = jsonTextOf(data);
    // UTF-8 takes at most 3 bytes per UTF-16 unit: only a long text is measured.
    if (text.length * 3 <= max || Buffer.byteLength(text, "utf8") <= max) return true;
    // Ajv fills in the paths of a keyword's errors that have none.
    const error = {
      keyword: MAX_JSON_BYTES,
      message: `must be at most ${bytesText(max)} as JSON`,
      params: { limit: max },
    };
    check.errors = [error as unknown as ErrorObject];
    return false;
  };
  return ajv.addKeyword({ keyword: MAX_JSON_BYTES, schemaType: "number", errors: true, validate: check });
};

/** A request's free-form value as the `kiln.common.v1.JsonText` a service takes: the text measured above, made once. */
export function requestJsonText(value: unknown): JsonText {
  return jsonTextMessage(jsonTextOf(value));
}
