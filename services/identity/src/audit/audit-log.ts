import { DEFAULT_AUDIT_RETENTION_DAYS } from "@kiln/contracts/audit";
import { invalidArgument, notFound, permissionDenied } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import type { Principal } from "@kiln/kit/principal";
import { type Collection, isDuplicateKeyError } from "@kiln/kit/store";
import type { IdentityCollections } from "../store/identity-store.js";
import { entryHash, GENESIS_HASH, verifyChain } from "./audit-chain.js";
import { type AuditEntryDoc, auditKey } from "./audit-store.js";

/** What the gateway hands identity for one change or sign-in. */
export interface AuditInput {
  id: string;
  organizationId: string;
  occurredAt: Date;
  actorType: string;
  actorId: string;
  action: string;
  targetType: string;
  targetId: string;
  requestId: string;
  sourceAddress: string;
  changedFields: string[];
  outcome: string;
}

export interface AuditQuery {
  organizationId: string;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  from?: Date;
  to?: Date;
  cursor: string;
  limit: number;
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
const VERIFY_PAGE = 500;
const MAX_CLASHES = 50;

/** The audit log of every organization (docs/governance.md), kept by identity, the owner of organizations. */
export function createAuditLog(
  entries: Collection<AuditEntryDoc>,
  c: IdentityCollections,
  now = () => new Date(),
  /** Told after entries were recorded (the stream sends them at once: audit-exporter.ts). */
  onRecorded: () => void = () => {},
) {
  /** Appends one entry to its organization's chain: the next number, linked to the last entry's hash. */
  async function append(input: AuditInput, organizationId: string): Promise<void> {
    for (let clash = 0; clash < MAX_CLASHES; clash++) {
      const last = await entries.findOne({ organizationId }, { sort: { sequence: -1 } });
      const body = {
        ...input,
        entryId: input.id,
        organizationId,
        sequence: (last?.sequence ?? 0) + 1,
        previousHash: last?.hash ?? GENESIS_HASH,
      };
      const { id: _id, ...rest } = body;
      const doc: AuditEntryDoc = {
        ...rest,
        _id: auditKey(organizationId, body.sequence),
        recordedAt: now(),
        hash: entryHash(rest),
      };
      try {
        await entries.insertOne(doc);
        return;
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
        // The same entry again (a retried record): kept once.
        if (await entries.findOne({ organizationId, entryId: input.id })) return;
        // Another writer took this number first: try the next.
      }
    }
    throw new Error(`audit entry ${input.id} found no place in the chain of ${organizationId}`);
  }

  /** The user whose e-mail address a sign-in gave, if there is one. */
  async function userByEmail(email: string): Promise<string> {
    if (!email) return "";
    return (await c.passwordLogins.findOne({ _id: email.toLowerCase() }))?.userId ?? "";
  }

  /**
   * A sign-in names no organization: it goes to every organization of the user it concerns. One
   * that succeeded comes without a principal (the route is public): its actor is that user.
   */
  async function organizationsOf(input: AuditInput): Promise<string[]> {
    if (input.organizationId) return [input.organizationId];
    // A SCIM call acted in its token's organization.
    if (input.actorType === "scim") {
      const token = await c.scimTokens.findOne({ _id: input.actorId });
      return token ? [token.organizationId] : [];
    }
    let userId = input.actorType === "user" ? input.actorId : "";
    if (!userId && input.targetType === "user") userId = await userByEmail(input.targetId);
    if (!userId) return [];
    if (input.actorType === "anonymous" && input.outcome === "success") {
      input.actorType = "user";
      input.actorId = userId;
    }
    const memberships = await c.memberships.find({ userId }, { limit: 1000 });
    return memberships.map((m) => m.organizationId);
  }

  /** Owners and admins of the organization, or its own API keys with `audit:read`; others see nothing (404). */
  async function assertReader(principal: Principal, organizationId: string): Promise<void> {
    if (principal.type === "user") {
      const membership = await c.memberships.findOne({ _id: `${organizationId}:${principal.id}` });
      if (!membership) throw notFound("organization");
      if (membership.role !== "owner" && membership.role !== "admin")
        throw permissionDenied("only organization owners and admins read the audit log");
      return;
    }
    if (principal.type === "api_key") {
      const key = await c.apiKeys.findOne({ _id: principal.id });
      if (!key || key.revokedAt || key.organizationId !== organizationId) throw notFound("organization");
      if (!key.scopes.includes("audit:read")) throw permissionDenied("this API key lacks the audit:read scope");
      return;
    }
    if (principal.organizationId !== organizationId) throw notFound("organization");
  }

  return {
    /** Records the gateway's entries (the platform principal only); each is kept once. */
    async record(principal: Principal, inputs: AuditInput[]): Promise<number> {
      if (principal.type !== "service" || principal.organizationId !== undefined)
        throw permissionDenied("audit entries are recorded by the Kiln gateway acting for the platform");
      let recorded = 0;
      for (const input of inputs) {
        if (!input.action) throw invalidArgument("an audit entry needs an action");
        const id = input.id || newId("aud");
        for (const organizationId of await organizationsOf(input)) {
          await append({ ...input, id }, organizationId);
          recorded++;
        }
      }
      if (recorded > 0) onRecorded();
      return recorded;
    },

    /** Newest first; the cursor is the sequence number below which the next page starts. */
    async list(principal: Principal, q: AuditQuery) {
      if (!q.organizationId) throw invalidArgument("organizationId is required");
      await assertReader(principal, q.organizationId);
      if (q.cursor && !/^\d{1,15}$/.test(q.cursor)) throw invalidArgument("the cursor is not one this list gave");
      const limit = Math.min(q.limit > 0 ? q.limit : DEFAULT_LIMIT, MAX_LIMIT);
      const occurredAt = { ...(q.from && { $gte: q.from }), ...(q.to && { $lt: q.to }) };
      const filter = {
        organizationId: q.organizationId,
        ...(q.cursor && { sequence: { $lt: Number(q.cursor) } }),
        ...(q.actor && { actorId: q.actor }),
        ...(q.action && { action: q.action }),
        ...(q.targetType && { targetType: q.targetType }),
        ...(q.targetId && { targetId: q.targetId }),
        ...(Object.keys(occurredAt).length > 0 && { occurredAt }),
      };
      const page = await entries.find(filter, { sort: { sequence: -1 }, limit: limit + 1 });
      const more = page.length > limit;
      const shown = page.slice(0, limit);
      return { entries: shown, nextCursor: more ? String(shown[shown.length - 1]?.sequence) : "" };
    },

    async verify(principal: Principal, organizationId: string) {
      if (!organizationId) throw invalidArgument("organizationId is required");
      await assertReader(principal, organizationId);
      return verifyChain((after) =>
        entries.find({ organizationId, sequence: { $gt: after } }, { sort: { sequence: 1 }, limit: VERIFY_PAGE }),
      );
    },

    /**
     * Removes entries past their organization's retention (default one year). The newest entry of
     * each organization stays whatever its age: the chain goes on from it.
     */
    async sweep(): Promise<number> {
      let removed = 0;
      const organizations = await c.organizations.find({}, { projection: { _id: 1, settings: 1 } });
      for (const org of organizations) {
        const days = org.settings?.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS;
        const last = await entries.findOne({ organizationId: org._id }, { sort: { sequence: -1 } });
        if (!last) continue;
        const cutoff = new Date(now().getTime() - days * 86_400_000);
        const r = await entries.deleteMany({
          organizationId: org._id,
          occurredAt: { $lt: cutoff },
          sequence: { $lt: last.sequence },
        });
        removed += r.deletedCount;
      }
      return removed;
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
