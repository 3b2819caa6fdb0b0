import { bytesText, jsonBytes } from "@kiln/kit/limits";
import type { ErrorObject, Plugin, SchemaValidateFunction } from "ajv";

/** The schema keyword that bounds a free-form JSON field by the size of its JSON text. */
export const MAX_JSON_BYTES = "x-maxJsonBytes";

/**
 * An Ajv plugin (Fastify's `ajv.plugins`): `{"x-maxJsonBytes": 65536}` refuses a value whose JSON
 * text is longer than that many UTF-8 bytes, with the field's path and the limit in the issue
 * (docs/api.md "Limits"). The OpenAPI document shows the keyword as an extension.
 */
export const jsonBytesKeyword: Plugin<unknown> = (ajv) => {
  const check: SchemaValidateFunction = (max: number, data: unknown) => {
    if (jsonBytes(data) <= max) return true;
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
