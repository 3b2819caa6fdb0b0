import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { API_KEY_SCOPES } from "@kiln/contracts/api-key-scopes";
import { API_KEY_PATTERN } from "@kiln/kit/principal";

export { API_KEY_SCOPES };

export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export function isApiKeyScope(s: string): s is ApiKeyScope {
  return (API_KEY_SCOPES as readonly string[]).includes(s);
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` base62 characters (43: 256 random bits), rejection-sampled so every character is uniform. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

/** The secret is high-entropy, so a plain SHA-256 is enough and keeps verification at microseconds. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A new key for the key id `key_<hex>`: the full key (shown once) and the hash to store. */
export function generateApiKey(keyId: string): { key: string; secretHash: string } {
  const secret = randomBase62(43);
  return { key: `sk_${keyId.slice("key_".length)}_${secret}`, secretHash: hashSecret(secret) };
}

/** Splits a presented key into its id and secret; undefined when it is not shaped like a key. */
export function parseApiKey(key: string): { keyId: string; secret: string } | undefined {
  const m = API_KEY_PATTERN.exec(key);
  if (!m?.[1] || !m[2]) return undefined;
  return { keyId: `key_${m[1]}`, secret: m[2] };
}
