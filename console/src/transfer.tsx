import type { ImportReport, Kiln } from "@kiln/sdk";
import { type ChangeEvent, useState } from "react";
import { useAction } from "./action.js";
import type { Session } from "./api.js";
import { download } from "./evaluation-case-files.js";
import { warningsByPlace } from "./import-files.js";
import { type ImportSource, type SourceKind, SourcePickers, sourceOf } from "./import-source.js";
import { plural } from "./run-format.js";
import { DataTable, ErrorBox } from "./ui.js";

/**
 * Export and import (docs/bundles.md): the organization as one kiln.bundle/v1 file; a bundle or a
 * promptfoo config imported (with its files, from a directory or an archive), checked by a dry run first.
 */
export function Transfer({ kiln, session }: { kiln: Kiln; session: Session }) {
  const organizationId = session.organizationId ?? "";
  const [exported, setExported] = useState<string | null>(null);
  const [source, setSource] = useState<ImportSource | null>(null);
  const [report, setReport] = useState<ImportReport | null>(null);
  const { error, act, busy } = useAction();

  const exportNow = () =>
    act(async () => {
      const bundle = await kiln.bundles.export(organizationId);
      download(`kiln-${organizationId}.json`, `${JSON.stringify(bundle, null, 2)}\n`, "application/json");
      setExported(
        [
          plural(bundle.prompts.length, "prompt"),
          plural(bundle.tools.length, "tool"),
          plural(bundle.skills.length, "skill"),
          plural(bundle.agents.length, "agent"),
        ].join(", "),
      );
    });

  const choose = (kind: SourceKind, event: ChangeEvent<HTMLInputElement>) =>
    act(async () => {
      setReport(null);
      setSource(null);
      setSource(await sourceOf(kind, event));
    });

  const importNow = (dryRun: boolean) =>
    act(async () => {
      if (!source) return;
      try {
        setReport(await kiln.bundles.import(organizationId, source.body, { dryRun }));
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
        <p>
          A Kiln export, or a promptfoo config: alone, or with the files it refers to (<code>file://…</code> prompts,
          tests and assertion values) as a directory or an archive. Check it first: nothing changes.
        </p>
        <SourcePickers onChoose={choose} />
        {source && (
          <div className="import-source" role="status">
            <p>
              Chosen: <strong>{source.label}</strong>
            </p>
            {source.files.length > 0 && (
              <details>
                <summary>Files sent with the config</summary>
                <ul className="places">
                  {source.files.map((f) => (
                    <li key={f}>
                      <code>{f}</code>
                    </li>
                  ))}
                </ul>
              </details>
            )}
            {source.skipped.length > 0 && (
              <p className="hint">Left out (not text, or over 8 MiB in all): {source.skipped.join(", ")}</p>
            )}
          </div>
        )}
        <p>
          <button type="button" className="secondary" onClick={() => importNow(true)} disabled={!source || busy}>
            Check (dry run)
          </button>{" "}
          <button
            type="button"
            onClick={() => importNow(false)}
            disabled={!source || busy || !report?.dryRun || report.summary.conflicts > 0}
          >
            Import
          </button>
        </p>
      </section>
      <ErrorBox error={error} />
      {report && <ImportReportView report={report} />}
    </main>
  );
}

function ImportReportView({ report }: { report: ImportReport }) {
  return (
    <section aria-labelledby="report-heading">
      <h2 id="report-heading">{report.dryRun ? "What the import would do" : "Imported"}</h2>
      <p role="status">
        {report.summary.created} created, {report.summary.updated} updated, {report.summary.skipped} skipped,{" "}
        {report.summary.conflicts} conflicts
      </p>
      {report.warnings.length > 0 && (
        <section aria-labelledby="warnings-heading" className="card warnings">
          <h3 id="warnings-heading">{plural(report.warnings.length, "warning")}: what is left out or changed</h3>
          <dl>
            {warningsByPlace(report.warnings).map(([place, ws]) => (
              <div key={place}>
                <dt>
                  <code>{place}</code>
                </dt>
                {ws.map((w) => (
                  <dd key={w}>{w}</dd>
                ))}
              </div>
            ))}
          </dl>
        </section>
      )}
      <DataTable label="Import items" columns={["Kind", "Name", "Outcome", "Detail"]}>
        {report.items.map((i) => (
          <tr key={`${i.kind}/${i.sourceId}`} className={i.outcome === "conflict" ? "run-failed" : undefined}>
            <td className="nowrap">{i.kind.replace("_", " ")}</td>
            <td className="nowrap">{i.name}</td>
            <td className="nowrap">{i.outcome}</td>
            <td>{i.detail ?? ""}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}
