import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { AuditEntry } from "@kiln/proto/audit";
import type { FastifyRequest } from "fastify";
import Type from "typebox";
import { HttpError } from "../errors.js";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { answers, listAnswers, operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { ListQuery, Timestamp } from "../schemas.js";
import { OrganizationId, organizationOf } from "./catalog-requests.js";

const op = operations({ tags: ["audit"], stability: "beta" });
const Filter = Type.Optional(Type.String({ minLength: 1, maxLength: 200 }));
const Instant = Type.Optional(Type.String({ format: "date-time", description: "RFC 3339" }));
const JSONL = "application/x-ndjson";

export const AuditEntryView = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    sequence: Type.Integer({ minimum: 1, description: "1, 2, 3… per organization, without a gap" }),
    occurredAt: Timestamp,
    actor: Type.Object({
      type: Type.String({ description: "user, api_key, service, scim or anonymous (a refused sign-in)" }),
      id: Type.String(),
      organizationId: Type.String({ description: "the organization it acted in" }),
    }),
    action: Type.String({ description: "e.g. prompt.version.published" }),
    target: Type.Object({ type: Type.String(), id: Type.String() }),
    requestId: Type.String(),
    sourceAddress: Type.String(),
    changedFields: Type.Array(Type.String(), { description: "names of the fields the change sent; never values" }),
    outcome: Type.Union([Type.Literal("success"), Type.Literal("failure")]),
    previousHash: Type.String(),
    hash: Type.String({ description: "sha256 of previousHash and the canonical entry (docs/governance.md)" }),
  },
  { $id: "AuditEntry" },
);

export const AuditVerificationView = Type.Object(
  {
    organizationId: Type.String(),
    valid: Type.Boolean(),
    entries: Type.Integer({ minimum: 0 }),
    firstSequence: Type.Integer({ minimum: 0 }),
    lastSequence: Type.Integer({ minimum: 0 }),
    brokenAtSequence: Nullable0(),
    problem: Type.Union([
      Type.Literal("gap"),
      Type.Literal("hash_mismatch"),
      Type.Literal("link_mismatch"),
      Type.Null(),
    ]),
  },
  { $id: "AuditVerification" },
);

function Nullable0() {
  return Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "where the chain breaks" });
}

export const auditEntryView = (e: AuditEntry) => ({
  id: e.id,
  organizationId: e.organizationId,
  sequence: Number(e.sequence),
  occurredAt: e.occurredAt ? timestampDate(e.occurredAt).toISOString() : "",
  actor: { type: e.actorType, id: e.actorId, organizationId: e.organizationId },
  action: e.action,
  target: { type: e.targetType, id: e.targetId },
  requestId: e.requestId,
  sourceAddress: e.sourceAddress,
  changedFields: e.changedFields,
  outcome: e.outcome as "success" | "failure",
  previousHash: e.previousHash,
  hash: e.hash,
});

const instant = (name: string, v: string | undefined) => {
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime()))
    throw new HttpError("invalid_argument", `${name} is not a date`, [{ field: name, issue: "is not a date" }]);
  return timestampFromDate(d);
};

const wantsJsonLines = (request: FastifyRequest, format: string | undefined) =>
  format === "jsonl" || (format === undefined && (request.headers.accept ?? "").includes(JSONL));

/** The audit log (docs/governance.md): owners, admins and API keys with `audit:read`. */
export function registerAuditRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { audit } = deps.clients;

  app.get(
    "/api/audit-log",
    op("listAuditEntries", "An organization's audit log, newest first; `format=jsonl` exports it as JSON Lines", {
      querystring: Type.Object(
        {
          organizationId: Type.Optional(OrganizationId),
          actor: Filter,
          action: Filter,
          targetType: Filter,
          targetId: Filter,
          from: Instant,
          to: Instant,
          format: Type.Optional(Type.Union([Type.Literal("json"), Type.Literal("jsonl")])),
          ...ListQuery,
        },
        { additionalProperties: false },
      ),
      response: listAnswers(AuditEntryView, 400, 401, 403, 404),
    }),
    async (request, reply) => {
      const q = request.query;
      const r = await audit.listAuditEntries(
        {
          organizationId: organizationOf(request, q.organizationId),
          actor: q.actor ?? "",
          action: q.action ?? "",
          targetType: q.targetType ?? "",
          targetId: q.targetId ?? "",
          from: instant("from", q.from),
          to: instant("to", q.to),
          cursor: q.cursor ?? "",
          limit: q.limit ? Number(q.limit) : 0,
        },
        rpcOptions(request),
      );
      const data = r.entries.map(auditEntryView);
      const nextCursor = r.nextCursor || null;
      if (!wantsJsonLines(request, q.format)) return { data, nextCursor };
      // One entry a line; the next page's cursor in a header, as a line would not be an entry.
      if (nextCursor) reply.header("x-next-cursor", nextCursor);
      const lines = data.map((e) => `${JSON.stringify(e)}\n`).join("");
      return reply.type(JSONL).send(lines as never);
    },
  );

  app.get(
    "/api/audit-log/verify",
    op("verifyAuditLog", "Checks an organization's audit chain: every number present, every hash its entry's", {
      querystring: Type.Object({ organizationId: Type.Optional(OrganizationId) }, { additionalProperties: false }),
      response: answers(AuditVerificationView, 400, 401, 403, 404),
    }),
    async (request) => {
      const organizationId = organizationOf(request, request.query.organizationId);
      const v = await audit.verifyAuditLog({ organizationId }, rpcOptions(request));
      return {
        organizationId,
        valid: v.valid,
        entries: Number(v.entries),
        firstSequence: Number(v.firstSequence),
        lastSequence: Number(v.lastSequence),
        brokenAtSequence: v.valid ? null : Number(v.brokenAtSequence),
        problem: (v.problem || null) as "gap" | "hash_mismatch" | "link_mismatch" | null,
      };
    },
  );
}
