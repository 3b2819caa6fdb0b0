/** ImportOrganization's request and report ↔ the import use case (bundles/run-import.ts). */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { invalidArgument } from "@kiln/kit/errors";
import { readJsonText } from "@kiln/kit/json-text";
import type { ImportOrganizationRequest, ImportOrganizationResponseSchema } from "@kiln/proto/catalog";
import type { ImportDocument, ImportReport } from "../bundles/run-import.js";

/** The document of the request, its JSON read at the boundary (valid, not nested past the limit). */
export function importDocumentOf(req: ImportOrganizationRequest): ImportDocument {
  const { document } = req;
  if (document.case === "bundle") {
    const read = readJsonText(document.value);
    if (!read.ok) throw invalidArgument("the bundle is not JSON", [{ field: "bundle", issue: read.issue }]);
    return { format: "kiln.bundle/v1", bundle: read.value };
  }
  if (document.case === "promptfoo") {
    const { config, files } = document.value;
    if (config.case === "text") return { format: "promptfoo", config: config.value, files };
    const read = readJsonText(config.value);
    if (!read.ok) throw invalidArgument("the promptfoo config is not JSON", [{ field: "config", issue: read.issue }]);
    return { format: "promptfoo", config: read.value, files };
  }
  throw invalidArgument("a bundle or a promptfoo config is required", [{ field: "document", issue: "is required" }]);
}

export function importReportToProto(r: ImportReport): MessageInitShape<typeof ImportOrganizationResponseSchema> {
  return {
    dryRun: r.dryRun,
    format: r.format,
    summary: r.summary,
    // A conflict has no id here; a missing detail stays unset.
    items: r.items.map((i) => ({ ...i, id: i.id ?? undefined })),
    warnings: r.warnings,
  };
}
