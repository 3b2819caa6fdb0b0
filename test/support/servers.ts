/**
 * Starts real servers for tests: nats-server (JetStream) and FerretDB (SQLite backend), each on a
 * free port with its own data directory, and stops them. Binaries come from NATS_SERVER_BIN /
 * FERRETDB_BIN, else PATH, else the places scripts/ensure-test-servers.sh installs them to.
 * A missing binary is an error: suites that need a server never skip silently.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
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

function stopper(proc: ChildProcess, dir: string) {
  return async (options?: { removeData?: boolean }) => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise<void>((r) => proc.once("exit", () => r()));
      proc.kill("SIGTERM");
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

/** Starts FerretDB v1 on its SQLite backend, telemetry off, in a fresh directory. */
export async function startFerretDb(options: { dir?: string; port?: number } = {}): Promise<RunningServer> {
  const bin = findBinary("ferretdb", "FERRETDB_BIN", [join(homedir(), ".local/bin"), join(homedir(), "go/bin")]);
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "kiln-ferretdb-"));
  mkdirSync(join(dir, "data"), { recursive: true });
  mkdirSync(join(dir, "state"), { recursive: true });
  const port = options.port ?? (await freePort());
  const proc = spawn(
    bin,
    [
      "--handler=sqlite",
      `--sqlite-url=file:${join(dir, "data")}/`,
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

/** Reads a nats-server ports file if present (kept for callers that start with `-p -1`). */
export function readPortsFile(dir: string): string | undefined {
  const f = readdirSync(dir).find((n) => n.endsWith(".ports"));
  return f ? (JSON.parse(readFileSync(join(dir, f), "utf8")) as { nats: string[] }).nats[0] : undefined;
}
