import { type ListQuery, PaginatedList } from "./paginated-list.js";
import type { Query, Session, SessionDetail, SessionTrace, Trace, TraceDetail } from "./resources.js";
import type { CallInit, RequestOptions, Transport } from "./transport.js";

/** OpenTelemetry traces sent to `/otel/v1/traces` (docs/observability.md): read with `traces:read`. */
export class Traces {
  constructor(private readonly t: Transport) {}

  /** The organization's traces, most recently ingested first; filters as docs/api.md "Traces" lists them. */
  list(query: ListQuery<Query<"listTraces">> = {}, options?: RequestOptions): PaginatedList<Trace> {
    const send = (init: CallInit, wire: Query<"listTraces">) =>
      this.t.api.GET("/api/traces", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  /** A trace with every span (the tree, each span's generation and tool call). */
  get(traceId: string, query: Query<"getTrace"> = {}, options?: RequestOptions): Promise<TraceDetail> {
    return this.t.call(
      (init) => this.t.api.GET("/api/traces/{traceId}", { ...init, params: { path: { traceId }, query } }),
      options,
    );
  }
}

/** Sessions: the traces sharing a session id (session.id, gen_ai.conversation.id, ...). */
export class Sessions {
  constructor(private readonly t: Transport) {}

  /** The organization's sessions, latest activity first. */
  list(query: ListQuery<Query<"listSessions">> = {}, options?: RequestOptions): PaginatedList<Session> {
    const send = (init: CallInit, wire: Query<"listSessions">) =>
      this.t.api.GET("/api/sessions", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  /** A session with one page of its traces in start order (`nextCursor` pages on). */
  get(sessionId: string, query: ListQuery<Query<"getSession">> = {}, options?: RequestOptions): Promise<SessionDetail> {
    const { limit, ...rest } = query;
    const wire = { ...rest, ...(limit === undefined ? {} : { limit: String(limit) }) };
    return this.t.call(
      (init) => this.t.api.GET("/api/sessions/{sessionId}", { ...init, params: { path: { sessionId }, query: wire } }),
      options,
    );
  }

  /** Every trace of a session in start order, page after page. */
  traces(sessionId: string, query: ListQuery<Query<"getSession">> = {}, options?: RequestOptions) {
    return new PaginatedList<SessionTrace>(async (cursor) => {
      const page = await this.get(sessionId, { ...query, ...(cursor === undefined ? {} : { cursor }) }, options);
      return { data: page.traces, nextCursor: page.nextCursor };
    }, query.cursor);
  }
}
