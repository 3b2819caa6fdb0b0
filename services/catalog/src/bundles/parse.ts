import type { Bundle } from "@kiln/contracts/bundle";
import { BUNDLE_FORMAT, BundleSchema } from "@kiln/contracts/bundle";
import { fieldOfPointer, fieldPath } from "@kiln/contracts/field-issues";
import { createSchemaAjv } from "@kiln/contracts/schema-ajv";
import { type FieldIssue, invalidArgument } from "@kiln/kit/errors";

const validateBundle = createSchemaAjv().compile(BundleSchema);

/** Parses and checks the shape of a bundle; 400 with every problem's place otherwise. */
export function parseBundle(text: string): Bundle {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidArgument("the bundle is not JSON", [{ field: "bundle", issue: "is not valid JSON" }]);
  }
  return checkBundle(value);
}

/** Checks the shape of a parsed bundle; 400 with every problem's place otherwise. */
export function checkBundle(value: unknown): Bundle {
  if (!validateBundle(value)) {
    const issues: FieldIssue[] = (validateBundle.errors ?? []).slice(0, 50).map((e) => {
      const extra = (e.params as { additionalProperty?: string }).additionalProperty;
      const field = fieldOfPointer("", e.instancePath, value) || "bundle";
      return extra
        ? { field: fieldPath(field === "bundle" ? "" : field, extra), issue: "is not a field of the bundle" }
        : { field, issue: e.message ?? "is invalid" };
    });
    throw invalidArgument(`not a ${BUNDLE_FORMAT} bundle`, issues);
  }
  return value as Bundle;
}
