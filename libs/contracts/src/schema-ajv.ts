/**
 * The one way tenant schemas are validated (JSON Schema 2020-12), in the services and in the SDK's
 * `render`: strict mode off (unknown keywords are legal annotations), no console logging, formats,
 * and RE2 for `pattern`, `patternProperties` and `propertyNames` (safe-regex.ts), so validation
 * runs in linear time whatever a tenant wrote, and a value matches on both sides alike.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import { compileSafeRegex } from "./safe-regex.js";

// ajv-formats is CommonJS: its plugin is both `module.exports` and `.default`; the types know `.default`.
const addFormats = ajvFormats.default;

/** ajv's regExp engine: a function of (pattern, flags) with the engine's name for standalone code. */
const re2Engine = Object.assign((pattern: string, flags: string) => compileSafeRegex(pattern, flags), {
  code: "re2js",
});

/** An ajv for tenant schemas; `validateSchema: false` for schemas judged when they were saved. */
export function createSchemaAjv(options: { allErrors?: boolean; validateSchema?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({
    strict: false,
    allErrors: options.allErrors ?? true,
    logger: false,
    validateSchema: options.validateSchema ?? true,
    code: { regExp: re2Engine },
  });
  addFormats(ajv);
  return ajv;
}
