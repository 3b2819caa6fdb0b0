/**
 * The data directory's own files: the format file (`kiln-data.json`), the lock (`kiln.pid`) that
 * keeps a second process out, and the names of the store files beside them.
 */
import { open, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The layout this Kiln writes and reads; a directory written by a newer Kiln is refused. */
export const DATA_FORMAT = 2;
const FORMAT_FILE = "kiln-data.json";
export const STORE_FILE = "store.db";
/** Format 1's LMDB database, carried over on the first open. */
export const LMDB_FILE = "store.mdb";
const LOCK_FILE = "kiln.pid";

export class DataDirError extends Error {
  override name = "DataDirError";
}

/** The store file and its log, so that a replaced database never meets another's log. */
export async function removeStore(location: string): Promise<void> {
  for (const suffix of ["", "-wal", "-shm"]) await rm(join(location, STORE_FILE + suffix), { force: true });
}

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

export async function writeFormat(location: string): Promise<void> {
  await writeFile(
    join(location, FORMAT_FILE),
    `${JSON.stringify({ format: DATA_FORMAT, createdAt: new Date().toISOString() })}\n`,
  );
}

/**
 * The directory's data format; writes the format file in a new directory, refuses a directory of a
 * newer or unknown format.
 */
export async function checkFormat(location: string, options: { mustExist?: boolean } = {}): Promise<number> {
  const file = join(location, FORMAT_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    if (options.mustExist) throw new DataDirError(`${location} is not a Kiln data directory (no ${FORMAT_FILE})`);
    await writeFormat(location);
    return DATA_FORMAT;
  }
  let format: unknown;
  try {
    format = (JSON.parse(text) as { format?: unknown }).format;
  } catch {
    format = undefined;
  }
  if (typeof format !== "number" || !Number.isInteger(format) || format < 1) {
    throw new DataDirError(`${file} is not a Kiln data format file; refusing to open ${location}`);
  }
  if (format > DATA_FORMAT) {
    throw new DataDirError(
      `${location} was written by a newer Kiln (data format ${format}; this Kiln reads up to ${DATA_FORMAT}). ` +
        "Upgrade Kiln, or set KILN_DATA_DIR to another directory.",
    );
  }
  return format;
}

/** One process per directory: a pid file, taken over when the process that wrote it is gone. */
export async function lock(location: string): Promise<() => Promise<void>> {
  const file = join(location, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, "wx", 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(file, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const pid = Number.parseInt(await readFile(file, "utf8").catch(() => ""), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DataDirError(`${location} is in use by another Kiln process (pid ${pid})`);
      }
      await rm(file, { force: true });
    }
  }
  throw new DataDirError(`could not lock ${location}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
