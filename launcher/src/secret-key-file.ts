/**
 * The embedded mode's secret key (docs/operations.md "Secret key"): `secret.key` in the data
 * directory, made on the first start (32 random bytes in base64, mode 0600) unless KILN_SECRET_KEY
 * is set. It lives beside the database, not in it, so a copy of the database (`kiln backup`)
 * does not carry the key that opens its secrets.
 */
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { newSecretKey, parseSecretKey, type SecretKeys } from "@kiln/kit/secret-box";

export const SECRET_KEY_FILE = "secret.key";

async function readKeyFile(file: string): Promise<Buffer | undefined> {
  try {
    return parseSecretKey(await readFile(file, "utf8"), file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/** Creates the file unless another process just did (then reads it): never two keys for one directory. */
async function createKeyFile(file: string): Promise<Buffer> {
  const key = newSecretKey();
  try {
    const handle = await open(file, "wx", 0o600);
    await handle.writeFile(`${key.toString("base64")}\n`);
    await handle.sync();
    await handle.close();
    return key;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    const kept = await readKeyFile(file);
    if (!kept) throw e;
    return kept;
  }
}

/**
 * The keys of a data directory: `configured` (KILN_SECRET_KEY and its previous keys) when given,
 * with the directory's own key, if it has one, among the previous keys (what it sealed before the
 * variable was set still opens, and the next start re-seals it); otherwise the directory's key,
 * made now if it has none.
 */
export async function dataDirSecretKeys(location: string, configured: SecretKeys | undefined): Promise<SecretKeys> {
  const file = join(location, SECRET_KEY_FILE);
  if (configured) {
    const own = await readKeyFile(file);
    return own && !own.equals(configured.current)
      ? { current: configured.current, previous: [...configured.previous, own] }
      : configured;
  }
  return { current: (await readKeyFile(file)) ?? (await createKeyFile(file)), previous: [] };
}
