import { invalidArgument } from "@kiln/kit/errors";
import type { DocumentDiff } from "./domain/version-diff.js";

/** A version diff as the RPCs answer it (api.md "Version diffs"); `from` null: against nothing. */
export interface VersionDiffView extends DocumentDiff {
  from: { versionId: string; version: number } | null;
  to: { versionId: string; version: number };
}

export function versionIdRequired(versionId: string): void {
  if (versionId === "") throw invalidArgument("versionId is required", [{ field: "versionId", issue: "is required" }]);
}
