import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { principalOf } from "@kiln/kit/principal";
import { AuditService } from "@kiln/proto/audit";
import type { AuditLog } from "../audit/audit-log.js";
import type { AuditEntryDoc } from "../audit/audit-store.js";
import { type AuditStreamSettings, auditStreamHandlers } from "./audit-stream-rpc.js";

const entryToProto = (e: AuditEntryDoc) => ({
  id: e.entryId,
  organizationId: e.organizationId,
  sequence: BigInt(e.sequence),
  occurredAt: timestampFromDate(e.occurredAt),
  actorType: e.actorType,
  actorId: e.actorId,
  action: e.action,
  targetType: e.targetType,
  targetId: e.targetId,
  requestId: e.requestId,
  sourceAddress: e.sourceAddress,
  changedFields: e.changedFields,
  outcome: e.outcome,
  previousHash: e.previousHash,
  hash: e.hash,
});

/** AuditService (proto/kiln/identity/v1/audit.proto) over the audit log and the organizations' streams. */
export function registerAuditRpc(router: ConnectRouter, audit: AuditLog, streams: AuditStreamSettings): void {
  router.service(AuditService, {
    ...auditStreamHandlers(streams),
    async recordAuditEntries(req, ctx) {
      const recorded = await audit.record(
        principalOf(ctx),
        req.entries.map((e) => ({
          id: e.id,
          organizationId: e.organizationId,
          occurredAt: e.occurredAt ? timestampDate(e.occurredAt) : new Date(),
          actorType: e.actorType,
          actorId: e.actorId,
          action: e.action,
          targetType: e.targetType,
          targetId: e.targetId,
          requestId: e.requestId,
          sourceAddress: e.sourceAddress,
          changedFields: e.changedFields,
          outcome: e.outcome || "success",
        })),
      );
      return { recorded };
    },
    async listAuditEntries(req, ctx) {
      const page = await audit.list(principalOf(ctx), {
        organizationId: req.organizationId,
        actor: req.actor,
        action: req.action,
        targetType: req.targetType,
        targetId: req.targetId,
        from: req.from ? timestampDate(req.from) : undefined,
        to: req.to ? timestampDate(req.to) : undefined,
        cursor: req.cursor,
        limit: req.limit,
      });
      return { entries: page.entries.map(entryToProto), nextCursor: page.nextCursor };
    },
    async verifyAuditLog(req, ctx) {
      const v = await audit.verify(principalOf(ctx), req.organizationId);
      return {
        valid: v.valid,
        entries: BigInt(v.entries),
        brokenAtSequence: BigInt(v.brokenAtSequence),
        problem: v.problem,
        firstSequence: BigInt(v.firstSequence),
        lastSequence: BigInt(v.lastSequence),
      };
    },
  });
}
