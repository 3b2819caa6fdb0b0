/**
 * `kiln embedded` as `pnpm start` runs it (the launcher in a process of its own), on a free port and
 * a data directory of the caller's: for the durability tests and the store benchmark.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceLauncherArgs } from "./launcher-entry.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface KilnProcess {
  base: string;
  /** The services' RPC port (h2c), when the process serves one (RPC_PORT is 0 here unless `env` says otherwise). */
  rpc?: string;
  child: ChildProcess;
  /** Resolves with the exit code once the process is gone. */
  exited: Promise<number | null>;
}

/**
 * Resolves once the process printed where it listens; rejects with its stderr when it exits first.
 * `compiled` runs the build `pnpm start` runs (launcher/dist/kiln.mjs, built by scripts/build.mjs
 * beforehand), else the current source (sourceLauncherArgs: the run's bundle, or tsx). `nodeArgs` go to node first (a benchmark's
 * `--cpu-prof`, which NODE_OPTIONS refuses).
 */
export async function startKilnProcess(
  dataDir: string,
  env: Record<string, string> = {},
  options: { compiled?: boolean; nodeArgs?: string[] } = {},
): Promise<KilnProcess> {
  const entry = options.compiled ? startCommandArgs() : sourceLauncherArgs(ROOT);
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry, "embedded"], {
    cwd: ROOT,
    env: {
      ...process.env,
      KILN_DATA_DIR: dataDir,
      PORT: "0",
      RPC_PORT: "0",
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "0",
      // Benchmarks run more than the Free plan's 1,000 runs a month in one organization.
      FREE_PLAN_MONTHLY_RUN_LIMIT: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  const { base, rpc } = await new Promise<{ base: string; rpc?: string }>((resolve, reject) => {
    // Read the banner to its last line; what follows (logs at LOG_LEVEL) is drained, not kept.
    let out: string | null = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      if (out === null) return;
      out += chunk;
      const found = /listening on (http:\/\/\S+)/.exec(out);
      if (found?.[1] && out.includes("Ctrl-C stops it.")) {
        resolve({ base: found[1], rpc: /Internal RPC .*?(http:\/\/\S+)/.exec(out)?.[1] });
        out = null;
      }
    });
    void exited.then((code) => reject(new Error(`kiln exited (${code}) before listening: ${stderr}`)));
  });
  return { base, rpc, child, exited };
}

/** The node arguments of `pnpm start` (package.json), so the tests and the benchmark run exactly that. */
function startCommandArgs(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } };
  const run = scripts.start.split("&&").at(-1)?.trim().split(/\s+/) ?? [];
  // "node <flags…> launcher/dist/kiln.mjs embedded": the flags and the file, absolute.
  return run.slice(1, -1).map((arg) => (arg.endsWith(".mjs") ? join(ROOT, arg) : arg));
}
