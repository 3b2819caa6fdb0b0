import { type Kiln, type Page, PaginatedList } from "@kiln/sdk";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { call, type Session } from "./api.js";
import { ListEnd, usePagedList } from "./paged-list.js";
import type { Navigate } from "./router.js";
import { exactCost, formatCost, formatDate, formatLatency, formatTokens } from "./run-format.js";
import { describeTarget, type Run, useRunTargets } from "./run-names.js";
import { DataTable, Empty, ErrorBox, Field, Link, Loading, SelectField, StatusBadge } from "./ui.js";

/** Runs read per page: the API's default. */
const PAGE_SIZE = 50;

interface Filters {
  kind: string;
  status: string;
  model: string;
  after: string;
  before: string;
}

const NO_FILTER: Filters = { kind: "", status: "", model: "", after: "", before: "" };

const query = (f: Record<string, string>) =>
  Object.entries(f)
    .filter(([, v]) => v !== "")
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join("&");

const isoOf = (local: string) => (local ? new Date(local).toISOString() : "");

/** The runs the filters select, page after page, through the SDK's pagination (non-public GET /api/runs). */
export function runList(session: Session, f: Filters): PaginatedList<Run> {
  const q = query({
    organizationId: session.organizationId ?? "",
    kind: f.kind,
    status: f.status,
    model: f.model,
    createdAfter: isoOf(f.after),
    createdBefore: isoOf(f.before),
    limit: String(PAGE_SIZE),
  });
  return new PaginatedList((cursor) =>
    call<Page<Run>>("GET", `/api/runs?${q}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
  );
}

/** The models a run can have used, for the model filter. */
function useModelIds(kiln: Kiln): string[] {
  const [ids, setIds] = useState<string[]>([]);
  useEffect(() => {
    kiln.models.list().then(
      (m) => setIds(m.data.map((x) => x.id)),
      () => setIds([]),
    );
  }, [kiln]);
  return ids;
}

/** The organization's runs, newest first, filtered by kind, status, model and time; every page reachable. */
export function Runs({ kiln, session, navigate }: { kiln: Kiln; session: Session; navigate: Navigate }) {
  const [form, setForm] = useState(NO_FILTER);
  const list = usePagedList<Run>();
  const { items: runs, error, start } = list;
  const models = useModelIds(kiln);
  const targets = useRunTargets(kiln, runs ?? []);
  const load = useCallback((f: Filters) => start(runList(session, f).pages()), [session, start]);
  useEffect(() => load(NO_FILTER), [load]);
  const set = (name: keyof Filters) => (value: string) => setForm((f) => ({ ...f, [name]: value }));
  function filter(e: FormEvent) {
    e.preventDefault();
    load(form);
  }
  return (
    <main>
      <h1>Runs</h1>
      <form onSubmit={filter} className="filters" aria-label="Filter runs">
        <SelectField id="runs-kind" label="Kind" value={form.kind} onChange={set("kind")}>
          <Options values={["", "prompt", "skill", "agent", "judge", "model"]} />
        </SelectField>
        <SelectField id="runs-status" label="Status" value={form.status} onChange={set("status")}>
          <Options values={["", "succeeded", "failed", "running", "cancelled"]} />
        </SelectField>
        <SelectField id="runs-model" label="Model" value={form.model} onChange={set("model")}>
          <Options values={["", ...models]} />
        </SelectField>
        <Field label="Created after" type="datetime-local" value={form.after} onChange={set("after")} />
        <Field label="Created before" type="datetime-local" value={form.before} onChange={set("before")} />
        <div className="filter-actions">
          <button type="submit">Filter runs</button>
        </div>
      </form>
      <ErrorBox error={error} />
      {runs === null ? (
        error ? null : (
          <Loading what="runs" />
        )
      ) : runs.length === 0 ? (
        <Empty>
          No run matches. Run a prompt or a skill in the{" "}
          <Link to="/playground" navigate={navigate}>
            playground
          </Link>
          .
        </Empty>
      ) : (
        <>
          <div className="runs-table">
            <DataTable
              label="Runs"
              columns={["What ran", "Kind", "Status", "Model", "Tokens", "Cost", "Latency", "Created"]}
            >
              {runs.map((r) => (
                <tr key={r.id} className={r.status === "failed" ? "run-failed" : undefined}>
                  <td className="what-ran">
                    <span className="target-name">
                      {describeTarget(targets.get(r.id)) ||
                        (r.kind === "judge" ? "LLM judge" : r.kind === "model" ? `Model ${r.model ?? ""}` : "")}
                    </span>
                    <Link to={`/runs/${r.id}`} navigate={navigate}>
                      {r.id}
                    </Link>
                  </td>
                  <td>{r.kind}</td>
                  <td>
                    <StatusBadge status={r.status} />
                    {r.error && <span className="run-error">{r.error.code}</span>}
                  </td>
                  <td>{r.model ?? "mixed"}</td>
                  <td className="num">{formatTokens(r.usage)}</td>
                  <td className="num" title={exactCost(r.estimatedCostUsd)}>
                    {formatCost(r.estimatedCostUsd)}
                  </td>
                  <td className="num">{formatLatency(r.latencyMs)}</td>
                  <td className="nowrap">{formatDate(r.createdAt)}</td>
                </tr>
              ))}
            </DataTable>
          </div>
          <ListEnd list={list} noun="run" order="newest" pageSize={PAGE_SIZE} />
        </>
      )}
    </main>
  );
}

/** A filter's options, each shown as its value ("any" for the empty one). */
function Options({ values }: { values: string[] }) {
  return values.map((v) => (
    <option key={v} value={v}>
      {v || "any"}
    </option>
  ));
}
