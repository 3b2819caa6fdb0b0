import type { Kiln, SessionDetail as SessionDetailData, SessionTrace, Session as TraceSession } from "@kiln/sdk";
import { useCallback, useEffect, useState } from "react";
import { errorOf, type Session, type ShownError } from "./api.js";
import { ListEnd, usePagedList } from "./paged-list.js";
import type { Navigate } from "./router.js";
import { exactCost, formatCost, formatCount, formatDate } from "./run-format.js";
import { Messages } from "./trace-messages.js";
import { durationOf, formatTraceTokens, HowToSendTraces, TraceStatus, traceCost } from "./traces.js";
import { DataTable, Empty, ErrorBox, Link, Loading, Pending } from "./ui.js";

const PAGE_SIZE = 50;
const sessionPath = (id: string) => `/sessions/${encodeURIComponent(id)}`;
const sessionCost = (s: TraceSession) => (
  <td className="num" title={exactCost(s.costUsd)}>
    {formatCost(s.costUsd)}
  </td>
);

/** The organization's sessions, latest activity first; every page reachable. */
export function Sessions({ kiln, session, navigate }: { kiln: Kiln; session: Session; navigate: Navigate }) {
  const list = usePagedList<TraceSession>();
  const { items: sessions, error, start } = list;
  useEffect(
    () => start(kiln.sessions.list({ organizationId: session.organizationId, limit: PAGE_SIZE }).pages()),
    [kiln, session, start],
  );
  return (
    <main>
      <h1>Sessions</h1>
      <p className="hint">
        Traces that share a <code>session.id</code> (or <code>gen_ai.conversation.id</code>), latest activity first.
      </p>
      <ErrorBox error={error} />
      {sessions === null ? (
        error ? null : (
          <Loading what="sessions" />
        )
      ) : sessions.length === 0 ? (
        <>
          <Empty>No sessions yet: no trace has named one.</Empty>
          <HowToSendTraces navigate={navigate} />
        </>
      ) : (
        <>
          <DataTable
            label="Sessions"
            columns={["Session", "User", "Traces", "Tokens", "Cost", "First", "Last activity"]}
          >
            {sessions.map((s) => (
              <tr key={s.sessionId}>
                <td className="trace-name">
                  <Link to={sessionPath(s.sessionId)} navigate={navigate}>
                    {s.sessionId}
                  </Link>
                </td>
                <td>{s.userId ?? "—"}</td>
                <td className="num">{s.traceCount}</td>
                <td className="num">{s.totalTokens === null ? "—" : formatCount(s.totalTokens)}</td>
                {sessionCost(s)}
                <td className="nowrap">{formatDate(s.firstTime)}</td>
                <td className="nowrap">{formatDate(s.lastTime)}</td>
              </tr>
            ))}
          </DataTable>
          <ListEnd list={list} noun="session" order="latest" pageSize={PAGE_SIZE} />
        </>
      )}
    </main>
  );
}

/** One turn of the conversation: what the trace was asked, what it answered, and its numbers. */
function Turn({ turn, navigate }: { turn: SessionTrace; navigate: Navigate }) {
  return (
    <li className={`card turn${turn.status === "error" ? " turn-error" : ""}`}>
      <h2>
        <Link to={`/traces/${turn.traceId}`} navigate={navigate}>
          {turn.name || "(unnamed)"}
        </Link>{" "}
        <TraceStatus status={turn.status} />
      </h2>
      <p className="hint">
        {formatDate(turn.startTime)} · {durationOf(turn.startTime, turn.endTime)} · {formatTraceTokens(turn)} ·{" "}
        {turn.models.join(", ") || "no model calls"} · {traceCost(turn).text}
        {turn.runId && (
          <>
            {" · "}
            <Link to={`/runs/${turn.runId}`} navigate={navigate}>
              Kiln run {turn.runId}
            </Link>
          </>
        )}
      </p>
      {turn.input === null && turn.output === null ? (
        <p className="hint">The trace carried no input or output messages.</p>
      ) : (
        <>
          <Messages value={turn.input} defaultRole="user" label="Asked" />
          <Messages value={turn.output} defaultRole="assistant" label="Answered" />
        </>
      )}
    </li>
  );
}

/** A session as a conversation: its traces in start order, each linking to its trace page. */
export function SessionDetail({
  kiln,
  session,
  sessionId,
  navigate,
}: {
  kiln: Kiln;
  session: Session;
  sessionId: string;
  navigate: Navigate;
}) {
  const [detail, setDetail] = useState<SessionDetailData | null>(null);
  const [turns, setTurns] = useState<SessionTrace[]>([]);
  const [error, setError] = useState<ShownError | null>(null);
  const [loading, setLoading] = useState(false);
  const load = useCallback(
    async (cursor?: string) => {
      setLoading(true);
      try {
        const page = await kiln.sessions.get(sessionId, {
          organizationId: session.organizationId,
          limit: PAGE_SIZE,
          ...(cursor ? { cursor } : {}),
        });
        setDetail(page);
        setTurns((t) => (cursor ? [...t, ...page.traces] : page.traces));
      } catch (e) {
        setError(errorOf(e));
      } finally {
        setLoading(false);
      }
    },
    [kiln, session, sessionId],
  );
  useEffect(() => void load(), [load]);
  if (!detail) return <Pending error={error} what="the session" />;
  return (
    <main className="session-page">
      <p className="hint">
        <Link to="/sessions" navigate={navigate}>
          Sessions
        </Link>
      </p>
      <h1>Session {detail.sessionId}</h1>
      <dl className="summary">
        <dt>User</dt>
        <dd>{detail.userId ?? "—"}</dd>
        <dt>Traces</dt>
        <dd>{detail.traceCount}</dd>
        <dt>Tokens</dt>
        <dd>{formatTraceTokens(detail)}</dd>
        <dt>Cost</dt>
        <dd title={exactCost(detail.costUsd)}>{formatCost(detail.costUsd)}</dd>
        <dt>Active</dt>
        <dd>
          {formatDate(detail.firstTime)} to {formatDate(detail.lastTime)}
        </dd>
      </dl>
      <ErrorBox error={error} />
      <ol className="conversation" aria-label="Conversation">
        {turns.map((t) => (
          <Turn key={t.traceId} turn={t} navigate={navigate} />
        ))}
      </ol>
      <p className="list-end" role="status" aria-live="polite">
        {turns.length} of {detail.traceCount} trace{detail.traceCount === 1 ? "" : "s"} shown.{" "}
        {detail.nextCursor && (
          <button
            type="button"
            className="secondary"
            disabled={loading}
            onClick={() => void load(detail.nextCursor ?? undefined)}
          >
            {loading ? "Loading…" : "Load later traces"}
          </button>
        )}
      </p>
    </main>
  );
}
