import type { ListQuery, PaginatedList } from "./paginated-list.js";
import type { AuditEntry, AuditVerification, Query } from "./resources.js";
import type { CallInit, RequestOptions, Transport } from "./transport.js";

/** An organization's audit log (docs/governance.md): owners, admins and API keys with `audit:read`. */
export class AuditLog {
  constructor(private readonly t: Transport) {}

  /** The entries, newest first; filters by actor, action, target and time as docs/api.md "Audit log" lists them. */
  list(query: ListQuery<Query<"listAuditEntries">> = {}, options?: RequestOptions): PaginatedList<AuditEntry> {
    const send = (init: CallInit, wire: Query<"listAuditEntries">) =>
      this.t.api.GET("/api/audit-log", { ...init, params: { query: wire } });
    return this.t.page(query, send, options);
  }

  /** Checks the organization's hash chain: a deleted entry is a `gap`, an edited one a `hash_mismatch`. */
  verify(query: Query<"verifyAuditLog"> = {}, options?: RequestOptions): Promise<AuditVerification> {
    return this.t.call((init) => this.t.api.GET("/api/audit-log/verify", { ...init, params: { query } }), options);
  }
}
