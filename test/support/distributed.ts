/**
 * Starts the distributed mode as real processes (identity, catalog, execution, evaluation, gateway),
 * each with `node --import tsx launcher/src/main.ts <name>`, on free ports, against the given
 * MongoDB-protocol server (databases named per run) and nats-server; stops them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { exportPKCS8, generateKeyPair } from "jose";
import { freePort } from "./servers.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export type ServiceName = "identity" | "catalog" | "execution" | "evaluation";

export interface DistributedOptions {
  mongoUrl: string;
  natsUrl: string;
  /** Extra environment for every process. */
  env?: Record<string, string>;
  /** Show the processes' logs (LOG_LEVEL) on this process's stderr. */
  logLevel?: string;
}

export interface Distributed {
  gatewayUrl: string;
  /** h2c base URLs of the services, for direct RPC clients. */
  serviceUrls: Record<ServiceName, string>;
  processes: Record<ServiceName | "gateway", ChildProcess>;
  stop(): Promise<void>;
}

function startProcess(name: string, env: Record<string, string>, logLevel: string): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "launcher/src/main.ts"), name], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: logLevel },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const forward = (chunk: Buffer) => {
    if (logLevel !== "silent") process.stderr.write(`[${name}] ${chunk}`);
  };
  child.stdout?.on("data", forward);
  child.stderr?.on("data", (chunk: Buffer) => process.stderr.write(`[${name}] ${chunk}`));
  return child;
}

async function waitReady(url: string, children: ChildProcess[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = children.find((c) => c.exitCode !== null);
    if (dead) throw new Error(`a process exited with code ${dead.exitCode} before the platform was ready`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready within ${timeoutMs} ms`);
    await sleep(100);
  }
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  const timedOut = await Promise.race([exited.then(() => false), sleep(10_000).then(() => true)]);
  if (timedOut) {
    child.kill("SIGKILL");
    await exited;
  }
}

/** A fresh ES256 key for the built-in issuer, as PKCS#8 PEM. */
export async function newSigningKeyPem(): Promise<string> {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  return exportPKCS8(privateKey);
}

export async function startDistributed(options: DistributedOptions): Promise<Distributed> {
  const run = randomBytes(4).toString("hex");
  const logLevel = options.logLevel ?? process.env.KILN_TEST_LOG_LEVEL ?? "silent";
  const common = {
    MONGODB_URL: options.mongoUrl,
    NATS_URL: options.natsUrl,
    INTERNAL_AUTH_SECRET: randomBytes(32).toString("base64url"),
    HOST: "127.0.0.1",
    SHUTDOWN_GRACE_MS: "5000",
    ...options.env,
  };
  const names: ServiceName[] = ["identity", "catalog", "execution", "evaluation"];
  const ports = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await freePort()] as const))) as Record<
    ServiceName,
    number
  >;
  const serviceUrls = Object.fromEntries(names.map((n) => [n, `http://127.0.0.1:${ports[n]}`])) as Record<
    ServiceName,
    string
  >;
  const signingKey = await newSigningKeyPem();
  const processes = {} as Distributed["processes"];
  for (const name of names) {
    processes[name] = startProcess(
      name,
      {
        ...common,
        PORT: String(ports[name]),
        MONGODB_DATABASE: `kiln_${name}_${run}`,
        IDENTITY_URL: serviceUrls.identity,
        CATALOG_URL: serviceUrls.catalog,
        ...(name === "identity" ? { IDENTITY_SIGNING_KEY: signingKey } : {}),
      },
      logLevel,
    );
  }
  const gatewayPort = await freePort();
  processes.gateway = startProcess(
    "gateway",
    {
      ...common,
      PORT: String(gatewayPort),
      IDENTITY_URL: serviceUrls.identity,
      CATALOG_URL: serviceUrls.catalog,
      EXECUTION_URL: serviceUrls.execution,
      EVALUATION_URL: serviceUrls.evaluation,
    },
    logLevel,
  );
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const all = Object.values(processes);
  try {
    // The gateway is ready when every service answers its readiness check.
    await waitReady(`${gatewayUrl}/readyz`, all);
  } catch (e) {
    await Promise.all(all.map(stopProcess));
    throw e;
  }
  return {
    gatewayUrl,
    serviceUrls,
    processes,
    async stop() {
      await stopProcess(processes.gateway);
      await Promise.all(names.map((n) => stopProcess(processes[n])));
    },
  };
}
