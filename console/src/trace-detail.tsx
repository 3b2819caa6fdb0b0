import type { Kiln, Span, TraceDetail as TraceDetailData } from "@kiln/sdk";
import { useCallback, useMemo, useState } from "react";
import { useLoaded } from "./action.js";
import type { Session, ShownError } from "./api.js";
import type { Navigate } from "./router.js";
import { formatDate } from "./run-format.js";
import { SpanPanel } from "./trace-span.js";
import { durationOf, formatTraceTokens, TraceStatus, traceCost } from "./traces.js";
import { Link, Pending } from "./ui.js";

interface Row {
  span: Span;
  depth: number;
}

/** The spans in tree order (depth first, children by start time), leaving out those under a collapsed span. */
function visibleRows(trace: TraceDetailData, collapsed: Set<string>): Row[] {
  const byId = new Map(trace.spans.map((s) => [s.spanId, s]));
  const rows: Row[] = [];
  const visit = (id: string, depth: number) => {
    const span = byId.get(id);
    if (!span) return;
    rows.push({ span, depth });
    if (!collapsed.has(id)) for (const child of span.children) visit(child, depth + 1);
  };
  for (const id of trace.rootSpanIds) visit(id, 0);
  return rows;
}

/** What a span is, in a word, beside its name. */
const kindOf = (s: Span) => (s.generation ? "model" : s.toolCall ? "tool" : "");

/** The span tree with a timeline: each bar placed by its start and sized by its duration within the trace. */
function SpanTree({
  trace,
  selected,
  onSelect,
}: {
  trace: TraceDetailData;
  selected: string;
  onSelect: (spanId: string) => void;
}) {
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set());
  const rows = visibleRows(trace, collapsed);
  const start = Date.parse(trace.startTime);
  const total = Math.max(1, Date.parse(trace.endTime) - start);
  const toggle = (id: string) =>
    setCollapsed((c) => {
      const next = new Set(c);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  return (
    <ol className="span-tree" aria-label="Spans">
      {rows.map(({ span, depth }) => {
        const left = ((Date.parse(span.startTime) - start) / total) * 100;
        const width = Math.max(0.5, ((Date.parse(span.endTime) - Date.parse(span.startTime)) / total) * 100);
        const kind = kindOf(span);
        return (
          <li
            key={span.spanId}
            className={`span-row${span.spanId === selected ? " selected" : ""}${span.status === "error" ? " span-error" : ""}`}
          >
            <div className="span-name" style={{ paddingLeft: `${depth * 1.1}rem` }}>
              {span.children.length > 0 ? (
                <button
                  type="button"
                  className="span-toggle"
                  aria-expanded={!collapsed.has(span.spanId)}
                  aria-label={`${collapsed.has(span.spanId) ? "Expand" : "Collapse"} ${span.name}`}
                  onClick={() => toggle(span.spanId)}
                >
                  {collapsed.has(span.spanId) ? "▸" : "▾"}
                </button>
              ) : (
                <span className="span-toggle" aria-hidden="true" />
              )}
              <button
                type="button"
                className="link span-select"
                title={span.name}
                aria-pressed={span.spanId === selected}
                onClick={() => onSelect(span.spanId)}
              >
                {span.name}
              </button>
              {kind && <span className={`chip span-kind-${kind}`}>{kind}</span>}
              {span.status === "error" && <span className="run-error">error</span>}
            </div>
            <div className="span-timeline" aria-hidden="true">
              <span
                className={`span-bar${kind ? ` bar-${kind}` : ""}`}
                style={{ left: `${Math.min(left, 99.5)}%`, width: `${Math.min(width, 100 - Math.min(left, 99.5))}%` }}
              />
            </div>
            <span className="span-duration">{durationOf(span.startTime, span.endTime)}</span>
          </li>
        );
      })}
    </ol>
  );
}

/** The Kiln run a span is part of: the nearest span up its ancestry (itself included) naming `kiln.run.id`. */
function runOfSpan(trace: TraceDetailData, span: Span): string | undefined {
  const byId = new Map(trace.spans.map((s) => [s.spanId, s]));
  for (let at: Span | undefined = span, hops = 0; at && hops < 64; at = byId.get(at.parentSpanId ?? ""), hops++) {
    const id = at.attributes["kiln.run.id"];
    if (typeof id === "string") return id;
  }
  return undefined;
}

/** A trace: its summary, the span tree with a timeline, and the selected span (the first model call at first). */
export function TraceDetail({
  kiln,
  session,
  traceId,
  navigate,
}: {
  kiln: Kiln;
  session: Session;
  traceId: string;
  navigate: Navigate;
}) {
  const [error, setError] = useState<ShownError | null>(null);
  const read = useCallback(
    () => kiln.traces.get(traceId, { organizationId: session.organizationId }),
    [kiln, session, traceId],
  );
  const { value: trace } = useLoaded(read, setError);
  const [chosen, setChosen] = useState("");
  const selected = useMemo(() => {
    if (!trace) return undefined;
    return (
      trace.spans.find((s) => s.spanId === chosen) ??
      trace.spans.find((s) => s.generation) ??
      trace.spans.find((s) => s.spanId === trace.rootSpanIds[0])
    );
  }, [trace, chosen]);
  if (!trace) return <Pending error={error} what="the trace" />;
  return (
    <main className="trace-page">
      <p className="hint">
        <Link to="/traces" navigate={navigate}>
          Traces
        </Link>
      </p>
      <h1>
        Trace {trace.name} <TraceStatus status={trace.status} />
      </h1>
      <dl className="summary">
        <dt>Trace id</dt>
        <dd>
          <code>{trace.traceId}</code>
        </dd>
        <dt>Started</dt>
        <dd>{formatDate(trace.startTime)}</dd>
        <dt>Duration</dt>
        <dd>{durationOf(trace.startTime, trace.endTime)}</dd>
        <dt>Tokens</dt>
        <dd>{formatTraceTokens(trace)}</dd>
        <dt>Cost</dt>
        <dd title={traceCost(trace).title}>{traceCost(trace).text}</dd>
        {trace.sessionId && (
          <>
            <dt>Session</dt>
            <dd>
              <Link to={`/sessions/${encodeURIComponent(trace.sessionId)}`} navigate={navigate}>
                {trace.sessionId}
              </Link>
            </dd>
          </>
        )}
        {trace.userId && (
          <>
            <dt>User</dt>
            <dd>{trace.userId}</dd>
          </>
        )}
        {trace.runId && (
          <>
            <dt>Kiln run</dt>
            <dd>
              <Link to={`/runs/${trace.runId}`} navigate={navigate}>
                {trace.runId}
              </Link>
              {trace.label ? ` · ${trace.label}` : ""}
            </dd>
          </>
        )}
      </dl>
      <div className="trace-layout">
        <section className="card" aria-label="Span tree">
          <h2>Spans ({trace.spanCount})</h2>
          <SpanTree trace={trace} selected={selected?.spanId ?? ""} onSelect={setChosen} />
        </section>
        {selected && (
          <SpanPanel key={selected.spanId} span={selected} runId={runOfSpan(trace, selected)} navigate={navigate} />
        )}
      </div>
    </main>
  );
}
