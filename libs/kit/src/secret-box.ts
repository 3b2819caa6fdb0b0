/**
 * Encryption at rest of the secrets the platform must keep readable (webhook signing secrets):
 * AES-256-GCM under `KILN_SECRET_KEY`, with the keys it replaced (`KILN_SECRET_KEY_PREVIOUS`) still
 * opening what they sealed. A sealed value is `enc:v1:<key id>:<base64url of iv, ciphertext, tag>`;
 * the key id (a hash prefix, not the key) picks the key, and the context (e.g. the owning
 * document's id) is authenticated, so a sealed value copied onto another document does not open.
 * A value without the prefix is plaintext stored before encryption: it opens as itself and
 * `isCurrent` is false, so its owner re-seals it.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const PREFIX = "enc:v1:";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface SecretKeys {
  current: Buffer;
  /** Keys that sealed earlier values, newest first; used only to open. */
  previous: readonly Buffer[];
}

export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** The plaintext of a sealed value (or of a plaintext one, as is); throws on an unknown key or tampering. */
  open(stored: string, context: string): string;
  /** Sealed under the current key: nothing to re-seal. */
  isCurrent(stored: string): boolean;
}

export class SecretKeyError extends Error {
  override name = "SecretKeyError";
}

const keyIdOf = (key: Buffer) =>
  createHash("sha256").update("kiln-secret-key\n").update(key).digest("hex").slice(0, 12);

/**
 * A key from configuration: 32 bytes as 64 hex digits or as base64 / base64url (44 or 43
 * characters). The error names the variable, never the value.
 */
export function parseSecretKey(text: string, name: string): Buffer {
  const value = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(value)
    ? Buffer.from(value, "hex")
    : /^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)
      ? Buffer.from(value, "base64")
      : undefined;
  if (key?.length !== KEY_BYTES) {
    throw new SecretKeyError(
      `${name} must be ${KEY_BYTES} bytes, as 64 hex digits or in base64 (openssl rand -base64 32)`,
    );
  }
  return key;
}

/** `KILN_SECRET_KEY` and the comma-separated `KILN_SECRET_KEY_PREVIOUS`. */
export function parseSecretKeys(current: string, previous = ""): SecretKeys {
  const olds = previous
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "")
    .map((k, i) => parseSecretKey(k, `KILN_SECRET_KEY_PREVIOUS (key ${i + 1})`));
  return { current: parseSecretKey(current, "KILN_SECRET_KEY"), previous: olds };
}

export function newSecretKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

export function createSecretBox(keys: SecretKeys): SecretBox {
  const currentId = keyIdOf(keys.current);
  const byId = new Map<string, Buffer>();
  for (const key of [...keys.previous].reverse()) byId.set(keyIdOf(key), key);
  byId.set(currentId, keys.current);
  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", keys.current, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([iv, cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${PREFIX}${currentId}:${body.toString("base64url")}`;
    },
    open(stored, context) {
      if (!stored.startsWith(PREFIX)) return stored;
      const [id = "", data = ""] = stored.slice(PREFIX.length).split(":");
      const key = byId.get(id);
      if (!key) {
        throw new SecretKeyError(
          "a stored secret was sealed with a key that is neither KILN_SECRET_KEY nor in KILN_SECRET_KEY_PREVIOUS",
        );
      }
      const body = Buffer.from(data, "base64url");
      if (body.length < IV_BYTES + TAG_BYTES) throw new SecretKeyError("a stored secret is truncated");
      const decipher = createDecipheriv("aes-256-gcm", key, body.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      try {
        return Buffer.concat([
          decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
          decipher.final(),
        ]).toString("utf8");
      } catch {
        throw new SecretKeyError("a stored secret does not open: altered, or moved from another document");
      }
    },
    isCurrent: (stored) => stored.startsWith(`${PREFIX}${currentId}:`),
  };
}
