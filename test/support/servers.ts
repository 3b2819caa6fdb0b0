/**
 * Starts real servers for tests: nats-server (JetStream), FerretDB (SQLite backend, or PostgreSQL
 * for the store scale test) and PostgreSQL, each on a free port with its own data directory, and
 * stops them. Binaries come from NATS_SERVER_BIN / FERRETDB_BIN / POSTGRES_BIN_DIR, else PATH, else
 * the places scripts/ensure-test-servers.sh installs them to.
 * A missing binary is an error: suites that need a server never skip silently.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export interface RunningServer {
  url: string;
  dir: string;
  process: ChildProcess;
  /** SIGTERM, wait for exit; the data directory is kept unless `removeData`. */
  stop(options?: { removeData?: boolean }): Promise<void>;
}

export function findBinary(name: string, envVar: string, extraDirs: string[]): string {
  const fromEnv = process.env[envVar];
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`${envVar}=${fromEnv} does not exist`);
    return fromEnv;
  }
  const dirs = [...(process.env.PATH ?? "").split(delimiter), ...extraDirs];
  for (const d of dirs) {
    const candidate = join(d, name);
    if (d && existsSync(candidate)) return candidate;
  }
  throw new Error(`${name} not found (set ${envVar}, or run: bash scripts/ensure-test-servers.sh)`);
}

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function stopper(proc: ChildProcess, dir: string, signal: NodeJS.Signals = "SIGTERM") {
  return async (options?: { removeData?: boolean }) => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise<void>((r) => proc.once("exit", () => r()));
      proc.kill(signal);
      const timedOut = await Promise.race([exited.then(() => false), sleep(5_000).then(() => true)]);
      if (timedOut) {
        proc.kill("SIGKILL");
        await exited;
      }
    }
    if (options?.removeData) rmSync(dir, { recursive: true, force: true });
  };
}

async function waitForPort(port: number, proc: ChildProcess, what: string, timeoutMs = 20_000): Promise<void> {
  const { connect } = await import("node:net");
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with code ${proc.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port} within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/**
 * Starts nats-server with JetStream. Pass `dir` and `port` to restart one on the same data and
 * address (outage tests).
 */
export async function startNatsServer(options: { dir?: string; port?: number } = {}): Promise<RunningServer> {
  const bin = findBinary("nats-server", "NATS_SERVER_BIN", ["/usr/sbin", "/usr/local/bin"]);
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "kiln-nats-"));
  const port = options.port ?? (await freePort());
  const proc = spawn(bin, ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", join(dir, "js")], {
    stdio: "ignore",
  });
  await waitForPort(port, proc, "nats-server");
  return { url: `nats://127.0.0.1:${port}`, dir, process: proc, stop: stopper(proc, dir) };
}

/**
 * Starts FerretDB v1, telemetry off, in a fresh directory: on its SQLite backend (the suites'), or
 * on PostgreSQL when `postgresqlUrl` names a database (the store scale test).
 */
export async function startFerretDb(
  options: { dir?: string; port?: number; postgresqlUrl?: string } = {},
): Promise<RunningServer> {
  const bin = findBinary("ferretdb", "FERRETDB_BIN", [join(homedir(), ".local/bin"), join(homedir(), "go/bin")]);
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "kiln-ferretdb-"));
  mkdirSync(join(dir, "data"), { recursive: true });
  mkdirSync(join(dir, "state"), { recursive: true });
  const port = options.port ?? (await freePort());
  const backend = options.postgresqlUrl
    ? ["--handler=postgresql", `--postgresql-url=${options.postgresqlUrl}`]
    : ["--handler=sqlite", `--sqlite-url=file:${join(dir, "data")}/`];
  const proc = spawn(
    bin,
    [
      ...backend,
      `--listen-addr=127.0.0.1:${port}`,
      "--telemetry=disable",
      `--state-dir=${join(dir, "state")}`,
      "--debug-addr=-",
      "--log-level=error",
    ],
    { stdio: "ignore", env: { ...process.env, DO_NOT_TRACK: "1" } },
  );
  await waitForPort(port, proc, "ferretdb");
  return { url: `mongodb://127.0.0.1:${port}/?directConnection=true`, dir, process: proc, stop: stopper(proc, dir) };
}

/** Where PostgreSQL's server binaries are: POSTGRES_BIN_DIR, else Debian's newest /usr/lib/postgresql/<major>/bin. */
export function postgresBinDir(): string {
  const fromEnv = process.env.POSTGRES_BIN_DIR;
  if (fromEnv) {
    if (!existsSync(join(fromEnv, "postgres"))) throw new Error(`POSTGRES_BIN_DIR=${fromEnv} holds no postgres`);
    return fromEnv;
  }
  const root = "/usr/lib/postgresql";
  const majors = existsSync(root) ? readdirSync(root).filter((m) => existsSync(join(root, m, "bin", "postgres"))) : [];
  const newest = majors.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest)
    throw new Error("postgres not found (set POSTGRES_BIN_DIR, or run: bash scripts/ensure-test-servers.sh)");
  return join(root, newest, "bin");
}

/**
 * PostgreSQL refuses to run as root: as root, the server runs as `nobody` (setpriv, util-linux),
 * which owns its data directory and nothing else; as anyone else, as that user.
 */
const UNPRIVILEGED = 65534;
const asServerUser = (command: string[]) =>
  process.getuid?.() === 0
    ? ["setpriv", `--reuid=${UNPRIVILEGED}`, `--regid=${UNPRIVILEGED}`, "--clear-groups", ...command]
    : command;

/** Runs a command to its end; its stdout, or an error with its stderr. */
function runToEnd(command: string[], what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const [bin, ...args] = command as [string, ...string[]];
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${what} failed (${code}): ${stderr}`)),
    );
  });
}

export interface RunningPostgres extends RunningServer {
  /** `postgres://kiln@127.0.0.1:<port>/<database>` (trust authentication, superuser `kiln`). */
  databaseUrl(database: string): string;
  /** Creates a database the way FerretDB asks for (UTF-8, C.UTF-8 locale, from template0). */
  createDatabase(database: string): Promise<void>;
  /** psql on `database` with these arguments (ON_ERROR_STOP, unaligned tuples only): its output. */
  psql(database: string, args: string[]): Promise<string>;
}

/**
 * Starts a PostgreSQL of its own: `initdb` into a fresh directory (superuser `kiln`, trust
 * authentication, listening on 127.0.0.1 and a socket in that directory only), on a free port,
 * durability off (a test's data). Never the machine's own PostgreSQL service.
 */
export async function startPostgres(): Promise<RunningPostgres> {
  const binDir = postgresBinDir();
  const dir = mkdtempSync(join(tmpdir(), "kiln-postgres-"));
  if (process.getuid?.() === 0) chownSync(dir, UNPRIVILEGED, UNPRIVILEGED);
  const data = join(dir, "data");
  await runToEnd(
    asServerUser([join(binDir, "initdb"), "-D", data, "-U", "kiln", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8"]),
    "initdb",
  );
  const port = await freePort();
  const settings = ["listen_addresses=127.0.0.1", "fsync=off", "synchronous_commit=off", "full_page_writes=off"];
  const server = asServerUser([
    join(binDir, "postgres"),
    ...["-D", data, "-p", String(port), "-k", dir],
    ...settings.flatMap((c) => ["-c", c]),
  ]);
  const proc = spawn(server[0] as string, server.slice(1), { stdio: "ignore" });
  await waitForPort(port, proc, "postgres");
  const client = ["-h", "127.0.0.1", "-p", String(port), "-U", "kiln"];
  // Listening is not yet accepting: pg_isready says when startup is over.
  for (let attempt = 1; ; attempt++) {
    try {
      await runToEnd([join(binDir, "pg_isready"), ...client, "-d", "postgres"], "pg_isready");
      break;
    } catch (e) {
      if (attempt >= 100 || proc.exitCode !== null) throw e;
      await sleep(100);
    }
  }
  const databaseUrl = (database: string) => `postgres://kiln@127.0.0.1:${port}/${database}`;
  return {
    url: databaseUrl("postgres"),
    dir,
    process: proc,
    databaseUrl,
    createDatabase: async (database) => {
      await runToEnd(
        [join(binDir, "createdb"), ...client, "-E", "UTF8", "--locale=C.UTF-8", "-T", "template0", database],
        "createdb",
      );
    },
    psql: (database, args) =>
      runToEnd([join(binDir, "psql"), ...client, "-d", database, "-v", "ON_ERROR_STOP=1", "-At", ...args], "psql"),
    // SIGINT: PostgreSQL's fast shutdown (SIGTERM would wait for every client to leave).
    stop: stopper(proc, dir, "SIGINT"),
  };
}

/** Reads a nats-server ports file if present (kept for callers that start with `-p -1`). */
export function readPortsFile(dir: string): string | undefined {
  const f = readdirSync(dir).find((n) => n.endsWith(".ports"));
  return f ? (JSON.parse(readFileSync(join(dir, f), "utf8")) as { nats: string[] }).nats[0] : undefined;
}
