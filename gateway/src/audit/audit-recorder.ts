import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId } from "@kiln/kit/ids";
import type { AuditEntryInput } from "@kiln/proto/audit";
import type { FastifyRequest } from "fastify";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { AUDIT_ACTIONS, AUDITED_FAILURES } from "./audit-actions.js";
import { createAuditSender } from "./audit-sender.js";
import { changedFieldsOf, organizationIn, organizationOf, targetIdOf } from "./audit-target.js";
import { samlSignInEntry } from "./saml-audit.js";
import { scimAuditOf } from "./scim-audit.js";

export type AuditEntryInit = Omit<AuditEntryInput, "$typeName" | "$unknown">;

/**
 * Records every audited write the gateway answers (audit-actions.ts) in the audit log: after the
 * service made the change and before the answer leaves, so a client that saw its change can read
 * its entry. The hot run path pays one table look-up: runs are not audited.
 */
export function registerAuditRecorder(app: GatewayApp, deps: GatewayDeps): void {
  const sender = createAuditSender(deps.clients.audit, deps.logger);
  app.addHook("onClose", () => sender.stop());
  const { catalog, review, datasets, webhooks } = deps.clients;
  /** The parent's organization for answers that name none (a label, a version, an item). */
  const parentLookups: Record<string, (id: string, request: FastifyRequest) => Promise<unknown>> = {
    prompts: (id, r) => catalog.getPrompt({ id }, rpcOptions(r)),
    tools: (id, r) => catalog.getTool({ id }, rpcOptions(r)),
    skills: (id, r) => catalog.getSkill({ id }, rpcOptions(r)),
    agents: (id, r) => catalog.getAgent({ id }, rpcOptions(r)),
    "annotation-queues": (id, r) => review.getQueue({ id }, rpcOptions(r)),
    datasets: (id, r) => datasets.getDataset({ id }, rpcOptions(r)),
    webhooks: (id, r) => webhooks.getWebhook({ id }, rpcOptions(r)),
  };

  async function organizationByParent(request: FastifyRequest): Promise<string> {
    const collection = (request.routeOptions.url ?? "").split("/")[2] ?? "";
    const id = (request.params as { id?: string } | undefined)?.id;
    const lookup = parentLookups[collection];
    if (!lookup || !id) return "";
    try {
      return organizationIn(await lookup(id, request));
    } catch {
      return "";
    }
  }

  async function recordScim(request: FastifyRequest, status: number, payload: unknown) {
    const scim = status < 400 ? scimAuditOf(request, parsed(payload)) : undefined;
    if (!scim?.actorId) return payload;
    await sender.send(
      {
        ...scim,
        id: newId("aud"),
        organizationId: "",
        occurredAt: timestampFromDate(new Date()),
        requestId: request.id,
        sourceAddress: request.ip,
        outcome: "success",
      },
      request.id,
    );
    return payload;
  }

  app.addHook("onSend", async (request, reply, payload) => {
    if (request.method === "GET") return payload;
    if ((request.routeOptions.url ?? "").startsWith("/scim/v2/")) return recordScim(request, reply.statusCode, payload);
    if (request.samlSignIn) {
      // A 5xx is no verdict (identity or the store failed), as for the other sign-ins.
      if (reply.statusCode < 500)
        await sender.send(samlSignInEntry(request, request.samlSignIn, reply.statusCode), request.id);
      return payload;
    }
    const operationId = (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId;
    if (!operationId) return payload;
    const declared = AUDIT_ACTIONS[operationId];
    // A replay of an earlier answer (the same Idempotency-Key) changed nothing: its first answer was recorded.
    if (!declared || request.idempotentReplayed) return payload;
    const failed = reply.statusCode >= 400;
    if (failed && !(AUDITED_FAILURES.has(operationId) && reply.statusCode < 500)) return payload;
    const [action, targetType, targetSpec] = declared;
    const answer = parsed(payload);
    const principal = request.principal;
    const signIn = AUDITED_FAILURES.has(operationId);
    // A sign-in belongs to the user's organizations, which identity knows; a change to the one it acted in.
    const organizationId = signIn ? "" : organizationOf(request, answer) || (await organizationByParent(request));
    const entry: AuditEntryInit = {
      id: newId("aud"),
      organizationId,
      occurredAt: timestampFromDate(new Date()),
      actorType: principal?.type ?? (signIn ? "anonymous" : "service"),
      actorId: principal?.id ?? "",
      action: failed ? `${action.replace(/\.signed_in$/, ".sign_in")}_failed` : action,
      targetType,
      targetId: targetIdOf(targetSpec, request, answer),
      requestId: request.id,
      sourceAddress: request.ip,
      // Never a secret: a sign-in's fields are credentials, so none are named.
      changedFields: signIn ? [] : changedFieldsOf(request.body),
      outcome: failed ? "failure" : "success",
    };
    if (!organizationId && !signIn) {
      deps.logger.warn({ operationId, requestId: request.id }, "audited change with no organization to record it in");
      return payload;
    }
    // As the gateway itself (the platform principal), which alone may record.
    await sender.send(entry, request.id);
    return payload;
  });
}

/** A JSON answer as an object; anything else (a stream, text) as undefined. */
function parsed(payload: unknown): unknown {
  try {
    return typeof payload === "string" && payload.startsWith("{") ? JSON.parse(payload) : undefined;
  } catch {
    return undefined;
  }
}
