import type { Kiln, Trace } from "@kiln/sdk";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { useFields } from "./action.js";
import type { Session } from "./api.js";
import { ListEnd, usePagedList } from "./paged-list.js";
import type { Navigate } from "./router.js";
import { exactCost, formatCost, formatCount, formatDate, formatLatency } from "./run-format.js";
import { DataTable, Empty, ErrorBox, Field, Link, Loading, SelectField } from "./ui.js";

/** Traces read per page: the API's default. */
const PAGE_SIZE = 50;

const FILTERS = ["name", "session", "user", "model", "status", "label", "from", "to", "minCost", "maxCost"] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
const NO_FILTER = Object.fromEntries(FILTERS.map((f) => [f, ""])) as Filters;

/** The list's query: the filters set (times as ISO-8601), the organization and the page size. */
function queryOf(session: Session, f: Filters) {
  const set = Object.fromEntries(Object.entries(f).filter(([, v]) => v.trim() !== ""));
  for (const t of ["from", "to"] as const) if (set[t]) set[t] = new Date(f[t]).toISOString();
  return { ...set, organizationId: session.organizationId, limit: PAGE_SIZE } as Parameters<Kiln["traces"]["list"]>[0];
}

/** "1,200 in / 300 out", or "—" when no call reported usage. */
export function formatTraceTokens(t: { inputTokens: number | null; outputTokens: number | null }): string {
  if (t.inputTokens === null && t.outputTokens === null) return "—";
  return `${formatCount(t.inputTokens ?? 0)} in / ${formatCount(t.outputTokens ?? 0)} out`;
}

/** A trace's total cost: "unpriced" when a model call has no price, "—" without model calls. */
export function traceCost(trace: Pick<Trace, "costUsd" | "models">): { text: string; title: string } {
  const calls = trace.models.length > 0 || trace.costUsd !== null;
  return calls
    ? { text: formatCost(trace.costUsd), title: exactCost(trace.costUsd) }
    : { text: "—", title: "no model calls" };
}

/** A trace's or span's status as a badge: an error stands out. */
export function TraceStatus({ status }: { status: string }) {
  const look = status === "error" ? "failed" : status === "ok" ? "succeeded" : "unset";
  return <span className={`badge status-${look}`}>{status}</span>;
}

/** A trace's or span's duration from its ISO times. */
export const durationOf = (start: string, end: string) =>
  formatLatency(Math.max(0, Date.parse(end) - Date.parse(start)));

/** Where traces come from, for an empty list: the OTLP endpoint and a key with traces:write. */
export function HowToSendTraces({ navigate }: { navigate: Navigate }) {
  return (
    <div className="card how-to-send">
      <p>
        Point any OpenTelemetry OTLP/HTTP exporter at this Kiln with an{" "}
        <Link to="/api-keys" navigate={navigate}>
          API key
        </Link>{" "}
        holding <code>traces:write</code>:
      </p>
      <pre>{`OTEL_EXPORTER_OTLP_ENDPOINT=${location.origin}/otel\nOTEL_EXPORTER_OTLP_HEADERS=x-api-key=sk_…`}</pre>
      <p className="hint">
        Spans go to <code>{location.origin}/otel/v1/traces</code>. GenAI, OpenInference and Vercel AI SDK attributes
        become model calls with messages, usage and cost; <code>session.id</code> groups traces into sessions. See
        docs/observability.md.
      </p>
    </div>
  );
}

/** The organization's traces, newest first, filtered; every page reachable. */
export function Traces({ kiln, session, navigate }: { kiln: Kiln; session: Session; navigate: Navigate }) {
  const list = usePagedList<Trace>();
  const { items: traces, error, start } = list;
  const { values, field } = useFields(NO_FILTER, error);
  const load = useCallback(
    (f: Filters) => start(kiln.traces.list(queryOf(session, f)).pages()),
    [kiln, session, start],
  );
  useEffect(() => load(NO_FILTER), [load]);
  const filtered = FILTERS.some((f) => values[f] !== "");
  // Ten fields: folded on a phone until asked for, open on a wider screen.
  const [open, setOpen] = useState(() => matchMedia("(min-width: 48rem)").matches);
  function filter(e: FormEvent) {
    e.preventDefault();
    load(values);
  }
  return (
    <main>
      <h1>Traces</h1>
      <details className="filter-box" open={open || Boolean(error)} onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>Filters{filtered ? " (set)" : ""}</summary>
        <form onSubmit={filter} className="filters" aria-label="Filter traces">
          <Field label="Name" {...field("name")} />
          <Field label="Session" {...field("session")} />
          <Field label="User" {...field("user")} />
          <Field label="Model" {...field("model")} />
          <SelectField id="traces-status" label="Status" {...field("status")}>
            {["", "ok", "error", "unset"].map((v) => (
              <option key={v} value={v}>
                {v || "any"}
              </option>
            ))}
          </SelectField>
          <Field label="Run label" {...field("label")} />
          <Field label="Started after" type="datetime-local" {...field("from")} />
          <Field label="Started before" type="datetime-local" {...field("to")} />
          <Field label="Cost at least (USD)" {...field("minCost")} />
          <Field label="Cost at most (USD)" {...field("maxCost")} />
          <div className="filter-actions">
            <button type="submit">Filter traces</button>
          </div>
        </form>
      </details>
      <ErrorBox error={error} shownFields={[...FILTERS]} />
      {traces === null ? (
        error ? null : (
          <Loading what="traces" />
        )
      ) : traces.length === 0 ? (
        filtered ? (
          <Empty>No trace matches these filters.</Empty>
        ) : (
          <>
            <Empty>No traces yet.</Empty>
            <HowToSendTraces navigate={navigate} />
          </>
        )
      ) : (
        <>
          <TraceTable traces={traces} navigate={navigate} />
          <ListEnd list={list} noun="trace" order="newest" pageSize={PAGE_SIZE} />
        </>
      )}
    </main>
  );
}

function TraceTable({ traces, navigate }: { traces: Trace[]; navigate: Navigate }) {
  return (
    <DataTable
      label="Traces"
      columns={["Trace", "Session", "User", "Models", "Status", "Spans", "Tokens", "Cost", "Duration", "Started"]}
    >
      {traces.map((t) => (
        <tr key={t.traceId} className={t.status === "error" ? "run-failed" : undefined}>
          <td className="trace-name">
            <Link to={`/traces/${t.traceId}`} navigate={navigate}>
              {t.name || "(unnamed)"}
            </Link>
            {t.runId && (
              <span className="hint trace-run">
                Kiln run{" "}
                <Link to={`/runs/${t.runId}`} navigate={navigate}>
                  {t.label ? `${t.runId} · ${t.label}` : t.runId}
                </Link>
              </span>
            )}
          </td>
          <td>
            {t.sessionId ? (
              <Link to={`/sessions/${encodeURIComponent(t.sessionId)}`} navigate={navigate}>
                {t.sessionId}
              </Link>
            ) : (
              "—"
            )}
          </td>
          <td>{t.userId ?? "—"}</td>
          <td>{t.models.join(", ") || "—"}</td>
          <td>
            <TraceStatus status={t.status} />
          </td>
          <td className="num">{t.spanCount}</td>
          <td className="num">{formatTraceTokens(t)}</td>
          <td className="num" title={traceCost(t).title}>
            {traceCost(t).text}
          </td>
          <td className="num">{durationOf(t.startTime, t.endTime)}</td>
          <td className="nowrap">{formatDate(t.startTime)}</td>
        </tr>
      ))}
    </DataTable>
  );
}
