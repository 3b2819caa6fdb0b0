/**
 * vitest globalSetup of the integration project: one FerretDB and one nats-server for the whole
 * run, on free ports with their own data directories. Tests isolate themselves by database name
 * and stream name. MONGODB_URL / NATS_URL point the suites at servers of your own instead.
 * It also bundles the launcher once for the run's launcher processes (launcher-entry.ts);
 * KILN_TEST_TSX=1 runs them through tsx instead.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type {} from "vitest";
import type { TestProject } from "vitest/node";
import { LAUNCHER_BUNDLE_ENV } from "./launcher-entry.js";
import { type RunningServer, startFerretDb, startNatsServer } from "./servers.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
// Beside launcher/dist (same depth), so the bundle finds console/dist and node_modules as the built
// launcher does; .tmp/ is ignored by git. Workers inherit the variable: they start after the setup.
const bundleDir = join(ROOT, "launcher", ".tmp", `test-${randomUUID()}`);

async function bundleLauncher(): Promise<void> {
  if (process.env.KILN_TEST_TSX === "1") return;
  const outfile = join(bundleDir, "kiln.mjs");
  await promisify(execFile)(process.execPath, ["scripts/build.mjs", "--out", outfile], { cwd: ROOT });
  process.env[LAUNCHER_BUNDLE_ENV] = outfile;
}

declare module "vitest" {
  export interface ProvidedContext {
    mongoUrl: string;
    natsUrl: string;
  }
}

const started: RunningServer[] = [];
const track = (server: RunningServer) => {
  started.push(server);
  return server.url;
};

export async function setup(project: TestProject): Promise<void> {
  const results = await Promise.allSettled([
    process.env.TEST_MONGODB_URL ?? startFerretDb().then(track),
    process.env.TEST_NATS_URL ?? startNatsServer().then(track),
    bundleLauncher(),
  ]);
  const failed = results.find((r) => r.status === "rejected");
  if (failed) {
    // Leave nothing running behind a failed setup.
    await teardown();
    throw failed.reason;
  }
  const [mongoUrl, natsUrl] = results.slice(0, 2).map((r) => (r.status === "fulfilled" ? r.value : ""));
  project.provide("mongoUrl", mongoUrl ?? "");
  project.provide("natsUrl", natsUrl ?? "");
}

export async function teardown(): Promise<void> {
  await Promise.all([
    ...started.map((s) => s.stop({ removeData: true })),
    rm(bundleDir, { recursive: true, force: true }),
  ]);
}
