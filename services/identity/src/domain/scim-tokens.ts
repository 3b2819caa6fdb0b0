import { hashSecret, randomBase62 } from "./api-keys.js";

const TOKEN = /^scim_([0-9a-f]{32})_([0-9A-Za-z]{43})$/;

/** A SCIM token is told from an API key (`sk_`) and an access token (a JWT) by its prefix alone. */
export const looksLikeScimToken = (credential: string) => credential.startsWith("scim_");

/**
 * A new token for the SCIM token id `sct_<hex>`: `scim_<hex>_<secret>` (shown once) and the hash of
 * its secret (stored), the way API keys are made (domain/api-keys.ts).
 */
export function generateScimToken(tokenId: string): { token: string; secretHash: string } {
  const secret = randomBase62(43);
  return { token: `scim_${tokenId.slice("sct_".length)}_${secret}`, secretHash: hashSecret(secret) };
}

/** The token id and secret of a presented token; undefined when it is not shaped like one. */
export function parseScimToken(token: string): { tokenId: string; secret: string } | undefined {
  const m = TOKEN.exec(token);
  if (!m?.[1] || !m[2]) return undefined;
  return { tokenId: `sct_${m[1]}`, secret: m[2] };
}
