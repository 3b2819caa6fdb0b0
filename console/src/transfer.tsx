import type { ImportReport, Kiln } from "@kiln/sdk";
import { type ChangeEvent, useState } from "react";
import { useAction } from "./action.js";
import type { Session, ShownError } from "./api.js";
import { plural } from "./run-format.js";
import { DataTable, ErrorBox } from "./ui.js";

/** What a chosen file is imported as: a bundle, or a promptfoo config (YAML, or JSON without a bundle's format). */
function importBodyOf(name: string, text: string): Parameters<Kiln["bundles"]["import"]>[1] {
  if (/\.ya?ml$/i.test(name)) return { format: "promptfoo", config: text };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw { message: `${name} is neither JSON nor YAML (.yaml, .yml)`, fields: {} } satisfies ShownError;
  }
  const value = parsed as { format?: unknown };
  if (value && typeof value === "object" && value.format === "kiln.bundle/v1")
    return parsed as Parameters<Kiln["bundles"]["import"]>[1];
  return { format: "promptfoo", config: parsed as Record<string, unknown> };
}

/**
 * Export and import (docs/bundles.md): the organization as one kiln.bundle/v1 file, and a bundle or
 * a promptfoo config imported, checked by a dry run first.
 */
export function Transfer({ kiln, session }: { kiln: Kiln; session: Session }) {
  const organizationId = session.organizationId ?? "";
  const [exported, setExported] = useState<string | null>(null);
  const [file, setFile] = useState<{ name: string; text: string } | null>(null);
  const [report, setReport] = useState<ImportReport | null>(null);
  const { error, setError, act, busy } = useAction();

  const exportNow = () =>
    act(async () => {
      const bundle = await kiln.bundles.export(organizationId);
      const blob = new Blob([`${JSON.stringify(bundle, null, 2)}\n`], { type: "application/json" });
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = `kiln-${organizationId}.json`;
      a.click();
      URL.revokeObjectURL(url);
      setExported(
        [
          plural(bundle.prompts.length, "prompt"),
          plural(bundle.tools.length, "tool"),
          plural(bundle.skills.length, "skill"),
          plural(bundle.agents.length, "agent"),
        ].join(", "),
      );
    });

  async function choose(event: ChangeEvent<HTMLInputElement>) {
    setReport(null);
    setError(null);
    const chosen = event.target.files?.[0];
    setFile(chosen ? { name: chosen.name, text: await chosen.text() } : null);
  }

  const importNow = (dryRun: boolean) =>
    act(async () => {
      if (!file) return;
      try {
        setReport(await kiln.bundles.import(organizationId, importBodyOf(file.name, file.text), { dryRun }));
      } catch (e) {
        setReport(null);
        throw e;
      }
    });

  return (
    <main>
      <h1>Export and import</h1>
      <section className="card" aria-labelledby="export-heading">
        <h2 id="export-heading">Export</h2>
        <p>Every prompt, tool, skill and agent with all their versions, labels and evaluation cases, as one file.</p>
        <button type="button" onClick={exportNow} disabled={busy}>
          Download export
        </button>
        {exported && <p role="status">Exported {exported}.</p>}
      </section>
      <section className="card" aria-labelledby="import-heading">
        <h2 id="import-heading">Import</h2>
        <p>A Kiln export (.json) or a promptfoo config (.yaml, .yml or .json). Check it first: nothing changes.</p>
        <label className="field">
          File to import
          <input type="file" accept=".json,.yaml,.yml,application/json,application/yaml" onChange={choose} />
        </label>
        <p>
          <button type="button" className="secondary" onClick={() => importNow(true)} disabled={!file || busy}>
            Check (dry run)
          </button>{" "}
          <button
            type="button"
            onClick={() => importNow(false)}
            disabled={!file || busy || !report?.dryRun || report.summary.conflicts > 0}
          >
            Import
          </button>
        </p>
      </section>
      <ErrorBox error={error} />
      {report && (
        <section aria-labelledby="report-heading">
          <h2 id="report-heading">{report.dryRun ? "What the import would do" : "Imported"}</h2>
          <p role="status">
            {report.summary.created} created, {report.summary.updated} updated, {report.summary.skipped} skipped,{" "}
            {report.summary.conflicts} conflicts
          </p>
          {report.warnings.length > 0 && (
            <ul aria-label="Warnings">
              {report.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          )}
          <DataTable label="Import items" columns={["Kind", "Name", "Outcome", "Detail"]}>
            {report.items.map((i) => (
              <tr key={`${i.kind}/${i.sourceId}`}>
                <td>{i.kind.replace("_", " ")}</td>
                <td>{i.name}</td>
                <td>{i.outcome}</td>
                <td>{i.detail ?? ""}</td>
              </tr>
            ))}
          </DataTable>
        </section>
      )}
    </main>
  );
}
