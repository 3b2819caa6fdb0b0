import type { AuditEntry, AuditVerification } from "@kiln/sdk";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { useAction } from "./action.js";
import { AuditStreamPanel } from "./audit-stream.js";
import { useAuthorNames } from "./authors.js";
import { ListEnd, usePagedList } from "./paged-list.js";
import type { PageProps } from "./router.js";
import { formatDate } from "./run-format.js";
import { DataTable, Empty, ErrorBox, Field, Link, Loading } from "./ui.js";

/** Entries read per page (the API's default is 50, its most 200). */
const PAGE_SIZE = 50;

interface Filters {
  action: string;
  actor: string;
  targetType: string;
  targetId: string;
  from: string;
  to: string;
}

const NO_FILTER: Filters = { action: "", actor: "", targetType: "", targetId: "", from: "", to: "" };

const isoOf = (local: string) => (local ? new Date(local).toISOString() : "");

/** The list's query: the filters set, the times as RFC 3339 (docs/governance.md "Reading and exporting"). */
function queryOf(organizationId: string, f: Filters) {
  const q: Record<string, string> = { organizationId };
  for (const [name, value] of Object.entries({ ...f, from: isoOf(f.from), to: isoOf(f.to) })) {
    if (value.trim() !== "") q[name] = value.trim();
  }
  return q;
}

/** The console page of a target the log names, by its type: the entry links to it. */
const PAGES: Record<string, string> = {
  prompt: "/prompts",
  skill: "/skills",
  agent: "/agents",
  tool: "/tools",
  dataset: "/datasets",
  queue: "/review",
};

/** What the verification answered, as a sentence. */
function verdict(v: AuditVerification): string {
  if (v.valid) {
    return v.entries === 0
      ? "The log is empty: nothing to verify."
      : `The chain holds: ${v.entries} entries, ${v.firstSequence} to ${v.lastSequence}, each linked to the one before.`;
  }
  const what =
    v.problem === "gap"
      ? "an entry is missing (deleted)"
      : v.problem === "link_mismatch"
        ? "an entry does not link to the one before"
        : "an entry was changed after it was written";
  return `The chain is broken at entry ${v.brokenAtSequence}: ${what}.`;
}

/**
 * The organization's audit log (docs/governance.md), newest first: who changed what, on what, from
 * where; filtered by action, actor, target and time, every page reachable; the chain verified on
 * demand; the filtered entries exported as JSON Lines; streamed to the organization's webhook
 * (audit-stream.tsx). Owners and admins read it; others are told the API's refusal.
 */
export function AuditLogPage({ kiln, session, navigate }: PageProps) {
  const organizationId = session.organizationId ?? "";
  const [form, setForm] = useState(NO_FILTER);
  const [applied, setApplied] = useState(NO_FILTER);
  const list = usePagedList<AuditEntry>();
  const { items: entries, error, start } = list;
  const nameOf = useAuthorNames(session);
  const verification = useAction();
  const [checked, setChecked] = useState<AuditVerification | null>(null);
  const load = useCallback(
    (f: Filters) => {
      setApplied(f);
      start(kiln.auditLog.list({ ...queryOf(organizationId, f), limit: PAGE_SIZE }).pages());
    },
    [kiln, organizationId, start],
  );
  useEffect(() => load(NO_FILTER), [load]);
  const set = (name: keyof Filters) => (value: string) => setForm((f) => ({ ...f, [name]: value }));
  const filter = (e: FormEvent) => {
    e.preventDefault();
    load(form);
  };
  const verify = verification.submit(async () => {
    setChecked(null);
    setChecked(await kiln.auditLog.verify({ organizationId }));
  });
  /** The entries the filters select (up to 200, the API's page), as the API writes them in JSON Lines. */
  const exportLines = verification.submit(async () => {
    const q = new URLSearchParams({ ...queryOf(organizationId, applied), format: "jsonl", limit: "200" });
    const response = await fetch(`/api/audit-log?${q}`);
    if (!response.ok) throw new Error(`The export failed (HTTP ${response.status}).`);
    const text = await response.text();
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
    link.download = `audit-log-${organizationId}.jsonl`;
    link.click();
    URL.revokeObjectURL(link.href);
  });
  const actorOf = (e: AuditEntry) =>
    e.actor.type === "user" || e.actor.type === "api_key" || e.actor.type === "service"
      ? nameOf({ type: e.actor.type, id: e.actor.id })
      : e.actor.type === "scim"
        ? "SCIM provisioning"
        : "someone not signed in";
  return (
    <main>
      <h1>Audit log</h1>
      <p className="hint">
        Every change in this organization: who made it, what it was and from where. The log is hash-chained, so a
        deleted or edited entry is found by verifying it.
      </p>
      <form onSubmit={filter} className="filters" aria-label="Filter the audit log">
        <Field label="Action" value={form.action} onChange={set("action")} placeholder="prompt.version.published" />
        <Field label="Actor id" value={form.actor} onChange={set("actor")} placeholder="usr_… or key_…" />
        <Field label="Target type" value={form.targetType} onChange={set("targetType")} placeholder="prompt" />
        <Field label="Target id" value={form.targetId} onChange={set("targetId")} />
        <Field label="From" type="datetime-local" value={form.from} onChange={set("from")} />
        <Field label="To" type="datetime-local" value={form.to} onChange={set("to")} />
        <div className="filter-actions">
          <button type="submit">Filter entries</button>
        </div>
      </form>
      <div className="actions">
        <button type="button" className="secondary" onClick={verify}>
          Verify the chain
        </button>
        <button type="button" className="secondary" onClick={exportLines} disabled={!entries?.length}>
          Export JSON Lines
        </button>
      </div>
      <ErrorBox error={verification.error} />
      {checked && (
        <p role="status" className={checked.valid ? "verified" : "issue"}>
          {verdict(checked)}
        </p>
      )}
      <ErrorBox error={error} />
      {entries === null ? (
        error ? null : (
          <Loading what="the audit log" />
        )
      ) : entries.length === 0 ? (
        <Empty>No entry matches.</Empty>
      ) : (
        <>
          <DataTable
            label="Audit entries"
            columns={["When", "Who", "Action", "Target", "Fields changed", "From", "Outcome"]}
          >
            {entries.map((e) => (
              <tr key={e.id} className={e.outcome === "failure" ? "run-failed" : undefined}>
                <td className="nowrap" title={`entry ${e.sequence}, request ${e.requestId}`}>
                  {formatDate(e.occurredAt)}
                </td>
                <td title={e.actor.id}>{actorOf(e)}</td>
                <td className="nowrap">
                  <code>{e.action}</code>
                </td>
                <td className="wrap">
                  {e.target.type}{" "}
                  {e.target.id &&
                    (PAGES[e.target.type] ? (
                      <Link to={`${PAGES[e.target.type]}/${e.target.id}`} navigate={navigate}>
                        {e.target.id}
                      </Link>
                    ) : (
                      <span className="hint">{e.target.id}</span>
                    ))}
                </td>
                <td className="wrap">{e.changedFields.length > 0 ? e.changedFields.join(", ") : "—"}</td>
                <td className="nowrap">{e.sourceAddress || "—"}</td>
                <td>{e.outcome}</td>
              </tr>
            ))}
          </DataTable>
          <ListEnd list={list} noun="change" order="newest" pageSize={PAGE_SIZE} />
        </>
      )}
      <AuditStreamPanel organizationId={organizationId} />
    </main>
  );
}
