/**
 * An organization's own audit webhook (docs/governance.md "Streaming"), one document per
 * organization that set one (`_id` is the organization's id), in `audit_streams`: the stream reads
 * this small collection each pass instead of every organization. The signing secret is sealed
 * (SecretBox, KILN_SECRET_KEY) with `sealContextOf(organizationId)`, so a sealed value copied onto
 * another organization's document does not open; it is never answered after it was made.
 */
import type { Collection, Store } from "@kiln/kit/store";

export interface AuditStreamDoc {
  _id: string;
  organizationId: string;
  url: string;
  /** `whsec_…`, sealed. */
  secret: string;
  createdAt: Date;
  updatedAt: Date;
  updatedByUserId: string;
}

export const auditStreams = (store: Store): Collection<AuditStreamDoc> => store.collection("audit_streams");

export const sealContextOf = (organizationId: string) => `audit_stream:${organizationId}`;

/** The name of the webhook destination's cursors (`webhook:<organizationId>`, export-cursors.ts). */
export const WEBHOOK_DESTINATION = "webhook";
