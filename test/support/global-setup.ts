/**
 * vitest globalSetup of the integration project: one FerretDB and one nats-server for the whole
 * run, on free ports with their own data directories. Tests isolate themselves by database name
 * and stream name. MONGODB_URL / NATS_URL point the suites at servers of your own instead.
 */
import type {} from "vitest";
import type { TestProject } from "vitest/node";
import { type RunningServer, startFerretDb, startNatsServer } from "./servers.js";

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
  ]);
  const failed = results.find((r) => r.status === "rejected");
  if (failed) {
    // Leave nothing running behind a failed setup.
    await teardown();
    throw failed.reason;
  }
  const [mongoUrl, natsUrl] = results.map((r) => (r.status === "fulfilled" ? r.value : ""));
  project.provide("mongoUrl", mongoUrl ?? "");
  project.provide("natsUrl", natsUrl ?? "");
}

export async function teardown(): Promise<void> {
  await Promise.all(started.map((s) => s.stop({ removeData: true })));
}
