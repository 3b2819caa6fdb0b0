import { hashSecret, randomBase62 } from "./api-keys.js";

/** How long an invitation can be accepted (docs/security.md "Invitations"). */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const TOKEN = /^inv_([0-9a-f]{32})_([0-9A-Za-z]{43})$/;

/**
 * A new token for the invitation id `inv_<hex>`: `inv_<hex>_<secret>` (shown once) and the hash of
 * its secret (stored). The id in the token finds the invitation; the secret proves it was given.
 */
export function generateInvitationToken(invitationId: string): { token: string; secretHash: string } {
  const secret = randomBase62(43);
  return { token: `${invitationId}_${secret}`, secretHash: hashSecret(secret) };
}

/** The invitation id and secret of a presented token; undefined when it is not shaped like one. */
export function parseInvitationToken(token: string): { invitationId: string; secret: string } | undefined {
  const m = TOKEN.exec(token.trim());
  if (!m?.[1] || !m[2]) return undefined;
  return { invitationId: `inv_${m[1]}`, secret: m[2] };
}

export type InvitationStatus = "pending" | "accepted" | "revoked" | "expired";

export function invitationStatus(
  invitation: { acceptedAt: Date | null; revokedAt: Date | null; expiresAt: Date },
  now: Date,
): InvitationStatus {
  if (invitation.acceptedAt) return "accepted";
  if (invitation.revokedAt) return "revoked";
  return invitation.expiresAt.getTime() <= now.getTime() ? "expired" : "pending";
}
