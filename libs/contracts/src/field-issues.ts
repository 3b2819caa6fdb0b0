/**
 * The `details` of a 400 (api.md "Errors"): `{field, issue}`, `field` the path of the field,
 * dotted, with array indices in brackets, the same from every layer. JSON Schema errors (ajv's)
 * are named here once, for every place that validates with a schema: the gateway's request
 * schemas, the catalog judging a tenant's schema, the execution service checking variables and
 * tool inputs, and the SDK's `render`, which must answer what a run answers.
 */

/** One problem of a request, on the field it is in. */
export interface FieldIssue {
  field: string;
  issue: string;
}

/** What naming needs of an ajv ErrorObject (structurally: this module does not load ajv). */
export interface SchemaError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

const INDEX = /^(0|[1-9]\d*)$/;

/** `base.key`, or `base[3]` for an array index; a key alone when there is no base. */
export function fieldPath(base: string, segment: string | number): string {
  if (typeof segment === "number") return `${base}[${segment}]`;
  return base ? `${base}.${segment}` : segment;
}

/**
 * The field a JSON Pointer names inside `root`, under `base`: `/items/0/city` under `variables` is
 * `variables.items[0].city`. A whole-number segment is an index when the value it is in is an
 * array, or is not known (no `root` given, or the pointer has left it); in an object it is a key
 * (`variables.0`).
 */
export function fieldOfPointer(base: string, pointer: string, root?: unknown): string {
  if (pointer === "") return base;
  let field = base;
  let current = root;
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const isObject = typeof current === "object" && current !== null && !Array.isArray(current);
    if (INDEX.test(segment) && !isObject) {
      field = fieldPath(field, Number(segment));
      current = Array.isArray(current) ? current[Number(segment)] : undefined;
    } else {
      field = fieldPath(field, segment);
      // Own properties only: a parsed `__proto__` key is an own property, the prototype is not.
      current =
        isObject && Object.hasOwn(current as object, segment)
          ? (current as Record<string, unknown>)[segment]
          : undefined;
    }
  }
  return field;
}

/** The property an error is about, below its instance: the one missing, not allowed, or a discriminator's tag. */
function propertyOf(error: SchemaError): string | undefined {
  const { missingProperty, additionalProperty, tag } = error.params;
  if (error.keyword === "required" && typeof missingProperty === "string") return missingProperty;
  if (error.keyword === "additionalProperties" && typeof additionalProperty === "string") return additionalProperty;
  if (error.keyword === "discriminator" && typeof tag === "string") return tag;
  return undefined;
}

/** What is wrong, in the platform's words: limits name their value (api.md "Limits"), enums their values as JSON. */
export function issueOfSchemaError(error: SchemaError): string {
  const { limit, allowedValues } = error.params;
  switch (error.keyword) {
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not allowed";
    case "maxLength":
      return `must be at most ${limit} characters`;
    case "maxItems":
      return `must hold at most ${limit} items`;
    case "enum":
      if (Array.isArray(allowedValues))
        return `must be one of ${allowedValues.map((v) => JSON.stringify(v)).join(", ")}`;
      break;
    case "discriminator":
      return error.params.error === "mapping" ? "is not a known type" : "is required and must be a string";
  }
  return error.message ?? "is invalid";
}

/**
 * ajv's errors as `details`, each field under `base` (`variables`, `input`, `""` for a request
 * body) and read against `value` when it is at hand (fieldOfPointer), each issue once. An `if`
 * error is left out: it only says that `then` failed, which the error before it names.
 */
export function fieldIssuesOf(errors: readonly SchemaError[], base: string, value?: unknown): FieldIssue[] {
  const seen = new Set<string>();
  const issues: FieldIssue[] = [];
  for (const error of errors) {
    if (error.keyword === "if") continue;
    const at = fieldOfPointer(base, error.instancePath, value);
    const property = propertyOf(error);
    const issue = { field: property === undefined ? at : fieldPath(at, property), issue: issueOfSchemaError(error) };
    const key = `${issue.field}\n${issue.issue}`;
    if (!seen.has(key)) issues.push(issue);
    seen.add(key);
  }
  return issues;
}
