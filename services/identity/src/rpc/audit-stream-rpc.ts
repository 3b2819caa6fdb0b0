/** AuditService's audit stream calls (proto/kiln/identity/v1/audit.proto): owners and admins, signed in. */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeleteAuditStreamRequest,
  GetAuditStreamRequest,
  PutAuditStreamRequest,
  RotateAuditStreamSecretRequest,
} from "@kiln/proto/audit";
import type { AuditStreamState, auditStreamSettingsUseCases } from "../use-cases/audit-stream-settings.js";
import { requireUser } from "./callers.js";

export type AuditStreamSettings = ReturnType<typeof auditStreamSettingsUseCases>;

const at = (d: Date | undefined) => (d && d.getTime() > 0 ? timestampFromDate(d) : undefined);

/** Never the secret. */
export const streamToProto = ({ stream, cursor }: AuditStreamState) => ({
  organizationId: stream.organizationId,
  url: stream.url,
  createdAt: timestampFromDate(stream.createdAt),
  updatedAt: timestampFromDate(stream.updatedAt),
  updatedByUserId: stream.updatedByUserId,
  delivery: {
    acknowledgedSequence: BigInt(cursor?.sequence ?? 0),
    acknowledgedAt: at(cursor?.acknowledgedAt),
    failures: cursor?.failures ?? 0,
    retryAt: cursor && cursor.failures > 0 ? at(cursor.retryAt) : undefined,
    lastError: cursor?.lastError ?? "",
    lastErrorAt: at(cursor?.lastErrorAt),
  },
});

export function auditStreamHandlers(settings: AuditStreamSettings) {
  return {
    async putAuditStream(req: PutAuditStreamRequest, ctx: HandlerContext) {
      const r = await settings.putAuditStream(requireUser(ctx), req.organizationId, req.url);
      return { stream: streamToProto(r), secret: r.secret ?? "" };
    },
    async getAuditStream(req: GetAuditStreamRequest, ctx: HandlerContext) {
      return { stream: streamToProto(await settings.getAuditStream(requireUser(ctx), req.organizationId)) };
    },
    async deleteAuditStream(req: DeleteAuditStreamRequest, ctx: HandlerContext) {
      return { stream: streamToProto(await settings.deleteAuditStream(requireUser(ctx), req.organizationId)) };
    },
    async rotateAuditStreamSecret(req: RotateAuditStreamSecretRequest, ctx: HandlerContext) {
      const r = await settings.rotateAuditStreamSecret(requireUser(ctx), req.organizationId);
      return { stream: streamToProto(r), secret: r.secret };
    },
  };
}
