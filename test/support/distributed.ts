/**
 * Starts the distributed mode as real processes (identity, catalog, execution, evaluation, gateway),
 * each from the current source (launcher-entry.ts: the run's bundle, or tsx) or the built launcher, on free ports, against the given
 * MongoDB-protocol server (databases named per run) and nats-server (streams and subjects under a
 * NATS_PREFIX of their own, so platforms sharing the server never take each other's work); more
 * replicas of a service from the start (every *_URL lists them all, as a headless Service would)
 * or on demand; stops them all. Every service gets every other service's URL.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { connect as connectH2 } from "node:http2";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { exportPKCS8, generateKeyPair } from "jose";
import { sourceLauncherArgs } from "./launcher-entry.js";
import { freePort } from "./servers.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export type ServiceName = "identity" | "catalog" | "execution" | "evaluation";

export interface DistributedOptions {
  mongoUrl: string;
  natsUrl: string;
  /** Extra environment for every process. */
  env?: Record<string, string>;
  /** Extra environment for one process (after `env`). */
  envOf?: Partial<Record<ServiceName | "gateway", Record<string, string>>>;
  /** Show the processes' logs (LOG_LEVEL) on this process's stderr. */
  logLevel?: string;
  /**
   * More processes of a service started with the platform, one per entry (its extra environment,
   * after `envOf`); the URLs every caller gets list all of them.
   */
  replicasOf?: Partial<Record<ServiceName, Record<string, string>[]>>;
  /**
   * Run the built launcher (launcher/dist/kiln.mjs, from `node scripts/build.mjs` beforehand) as the
   * image does, instead of the TypeScript through tsx: for the benchmarks.
   */
  compiled?: boolean;
  /** How long the platform may take to be ready; default 60 s (more for many processes on a loaded machine). */
  readyTimeoutMs?: number;
  /** Extra node arguments for one process (e.g. `--cpu-prof`), by launcher command. */
  nodeArgsOf?: Record<string, string[]>;
}

export interface Distributed {
  gatewayUrl: string;
  /** h2c base URLs of the services, for direct RPC clients. */
  serviceUrls: Record<ServiceName, string>;
  processes: Record<ServiceName | "gateway", ChildProcess>;
  /** Every process of each service started with the platform, `processes[name]` first. */
  instances: Record<ServiceName, Replica[]>;
  /** The NATS_PREFIX of this platform's streams and subjects. */
  natsPrefix: string;
  /** The MongoDB database of each service. */
  databases: Record<ServiceName, string>;
  /**
   * Starts one more process of a service with that service's environment on a fresh port, and
   * waits until it is ready; `stop()` stops it too.
   */
  startReplica(service: ServiceName, options?: ReplicaOptions): Promise<Replica>;
  /** kill -9 of a process started with the platform (`instances[target][index]`, or the gateway); resolves once it exited. */
  kill(target: ServiceName | "gateway", index?: number): Promise<void>;
  /** Starts a killed or stopped process again (same command, environment and port); resolves once it is ready. */
  restart(target: ServiceName | "gateway", index?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ReplicaOptions {
  /** Its launcher command; default the service's name. */
  command?: string;
  env?: Record<string, string>;
  /**
   * For a process that serves no port (a worker-only command): it is ready once it logs this
   * message (it logs at "info" at least for that).
   */
  readyLog?: string;
}

export interface Replica {
  process: ChildProcess;
  /** h2c base URL of its RPC server (none for a process started with `readyLog`). */
  url: string;
}

const QUIETER_THAN_INFO = new Set(["silent", "fatal", "error", "warn"]);

/**
 * How the image starts every process (deploy/Dockerfile), so the benchmarks run what the image
 * runs: the node flags of its ENTRYPOINT between "node" and the bundle (source maps, the heap
 * bounds) and the allocator settings of its last stage (`ENV MALLOC_…=…`). Read once.
 */
let image: { nodeFlags: string[]; allocatorEnv: Record<string, string> } | undefined;
function imageSettings(): NonNullable<typeof image> {
  if (!image) {
    const dockerfile = readFileSync(join(ROOT, "deploy/Dockerfile"), "utf8");
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1] ?? "[]") as string[];
    const lastStage = dockerfile.split(/^FROM /m).at(-1) ?? "";
    image = {
      nodeFlags: entrypoint.slice(1, -1),
      allocatorEnv: Object.fromEntries([...lastStage.matchAll(/^ENV (MALLOC_\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]])),
    };
  }
  return image;
}

/** The image's node flags; KILN_SERVICE_NODE_FLAGS replaces them, to measure others. */
function imageNodeFlags(): string[] {
  const override = process.env.KILN_SERVICE_NODE_FLAGS;
  return override !== undefined ? override.split(" ").filter(Boolean) : imageSettings().nodeFlags;
}

/** The node arguments that start a launcher command, per `compiled` and `nodeArgsOf`. */
function nodeArgs(options: Pick<DistributedOptions, "compiled" | "nodeArgsOf">, command: string): string[] {
  const entry = options.compiled
    ? [...imageNodeFlags(), join(ROOT, "launcher/dist/kiln.mjs")]
    : sourceLauncherArgs(ROOT);
  return [...(options.nodeArgsOf?.[command] ?? []), ...entry, command];
}

function startProcess(
  args: string[],
  env: Record<string, string>,
  logLevel: string,
  onStdout?: (chunk: Buffer) => void,
): ChildProcess {
  const command = args.at(-1);
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: onStdout && QUIETER_THAN_INFO.has(logLevel) ? "info" : logLevel },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const keep = (chunk: Buffer) =>
    tails.set(child, ((tails.get(child) ?? "") + chunk.toString("utf8")).slice(-TAIL_CHARS));
  const forward = (chunk: Buffer) => {
    keep(chunk);
    onStdout?.(chunk);
    if (logLevel !== "silent") process.stderr.write(`[${command}] ${chunk}`);
  };
  child.stdout?.on("data", forward);
  child.stderr?.on("data", (chunk: Buffer) => {
    keep(chunk);
    process.stderr.write(`[${command}] ${chunk}`);
  });
  return child;
}

/** The last output of each process, for the error that says it died before it was ready. */
const tails = new WeakMap<ChildProcess, string>();
const TAIL_CHARS = 2_000;

function diedBeforeReady(child: ChildProcess, code: number | null, what: string): Error {
  return new Error(
    `${child.spawnargs.at(-1) ?? "a process"} exited with code ${code} before ${what}; its last output:\n${tails.get(child) ?? "(none)"}`,
  );
}

/** Resolves once `child` wrote `message` to its stdout; rejects when it exits first or after `timeoutMs`. */
function logged(
  child: ChildProcess,
  message: string,
  timeoutMs = 60_000,
): { seen(chunk: Buffer): void; ready: Promise<void> } {
  let output: string | null = "";
  let settle: (error?: Error) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => settle(new Error(`"${message}" not logged within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code: number | null) => settle(diedBeforeReady(child, code, "it was ready"));
    child.once("exit", onExit);
    settle = (error) => {
      clearTimeout(timer);
      child.off("exit", onExit);
      if (error) reject(error);
      else resolve();
    };
  });
  return {
    seen(chunk) {
      if (output === null) return;
      output += chunk.toString("utf8");
      if (output.includes(message)) {
        output = null;
        settle();
      }
    },
    ready,
  };
}

async function waitReady(url: string, children: ChildProcess[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = children.find((c) => c.exitCode !== null);
    if (dead) throw diedBeforeReady(dead, dead.exitCode, "the platform was ready");
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

/** GET `path` over cleartext HTTP/2 (the services' port speaks h2c only): its status, 0 when unreachable. */
function h2Status(baseUrl: string, path: string): Promise<number> {
  return new Promise((resolve) => {
    const session = connectH2(baseUrl);
    const done = (status: number) => {
      session.destroy();
      resolve(status);
    };
    session.on("error", () => done(0));
    session.setTimeout(2_000, () => done(0));
    const req = session.request({ ":path": path });
    req.on("response", (headers) => done(Number(headers[":status"] ?? 0)));
    req.on("error", () => done(0));
    req.end();
  });
}

async function waitReadyH2(baseUrl: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`a process exited with code ${child.exitCode} before it was ready`);
    if ((await h2Status(baseUrl, "/readyz")) === 200) return;
    if (Date.now() > deadline) throw new Error(`${baseUrl}/readyz not ready within ${timeoutMs} ms`);
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

/**
 * Starts the platform; once more when a process found its port taken (a free port is picked, then
 * released for the process to take, and another may take it first: EADDRINUSE).
 */
export async function startDistributed(options: DistributedOptions): Promise<Distributed> {
  try {
    return await startPlatform(options);
  } catch (e) {
    if (!(e instanceof Error && e.message.includes("EADDRINUSE"))) throw e;
    return await startPlatform(options);
  }
}

async function startPlatform(options: DistributedOptions): Promise<Distributed> {
  const run = randomBytes(4).toString("hex");
  const logLevel = options.logLevel ?? process.env.KILN_TEST_LOG_LEVEL ?? "silent";
  const natsPrefix = `t${run}`;
  const common = {
    MONGODB_URL: options.mongoUrl,
    NATS_URL: options.natsUrl,
    NATS_PREFIX: natsPrefix,
    INTERNAL_AUTH_SECRET: randomBytes(32).toString("base64url"),
    KILN_SECRET_KEY: randomBytes(32).toString("base64"),
    HOST: "127.0.0.1",
    SHUTDOWN_GRACE_MS: "5000",
    // What the image runs: its allocator settings with its node flags.
    ...(options.compiled ? imageSettings().allocatorEnv : {}),
    ...options.env,
  };
  const names: ServiceName[] = ["identity", "catalog", "execution", "evaluation"];
  const replicaEnvs = (n: ServiceName) => [{}, ...(options.replicasOf?.[n] ?? [])];
  const ports = Object.fromEntries(
    await Promise.all(names.map(async (n) => [n, await Promise.all(replicaEnvs(n).map(() => freePort()))] as const)),
  ) as Record<ServiceName, number[]>;
  const urlsOf = (n: ServiceName) => ports[n].map((p) => `http://127.0.0.1:${p}`);
  const serviceUrls = Object.fromEntries(names.map((n) => [n, urlsOf(n)[0]])) as Record<ServiceName, string>;
  // What callers get: every replica, as DNS answers for a headless Service.
  const callerUrls = Object.fromEntries(names.map((n) => [n, urlsOf(n).join(",")])) as Record<ServiceName, string>;
  const databases = Object.fromEntries(names.map((n) => [n, `kiln_${n}_${run}`])) as Record<ServiceName, string>;
  const signingKey = await newSigningKeyPem();
  const processes = {} as Distributed["processes"];
  const envOf = (name: ServiceName) => ({
    ...common,
    MONGODB_DATABASE: databases[name],
    IDENTITY_URL: callerUrls.identity,
    CATALOG_URL: callerUrls.catalog,
    EXECUTION_URL: callerUrls.execution,
    EVALUATION_URL: callerUrls.evaluation,
    ...(name === "identity" ? { IDENTITY_SIGNING_KEY: signingKey } : {}),
    ...options.envOf?.[name],
  });
  const instances = {} as Distributed["instances"];
  /** How each process of the platform was started, for restart(): "<service>:<index>" or "gateway". */
  const started = new Map<string, { args: string[]; env: Record<string, string> }>();
  const spawnAs = (key: string, args: string[], env: Record<string, string>) => {
    started.set(key, { args, env });
    return startProcess(args, env, logLevel);
  };
  for (const name of names) {
    instances[name] = replicaEnvs(name).map((extra, i) => ({
      process: spawnAs(`${name}:${i}`, nodeArgs(options, name), {
        ...envOf(name),
        ...extra,
        PORT: String(ports[name][i]),
      }),
      url: urlsOf(name)[i] ?? "",
    }));
    processes[name] = instances[name][0]?.process as ChildProcess;
  }
  const gatewayPort = await freePort();
  processes.gateway = spawnAs("gateway", nodeArgs(options, "gateway"), {
    ...common,
    PORT: String(gatewayPort),
    IDENTITY_URL: callerUrls.identity,
    CATALOG_URL: callerUrls.catalog,
    EXECUTION_URL: callerUrls.execution,
    EVALUATION_URL: callerUrls.evaluation,
    ...options.envOf?.gateway,
  });
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const all = [processes.gateway, ...names.flatMap((n) => instances[n].map((i) => i.process))];
  try {
    // The gateway is ready when every service answers its readiness check.
    await waitReady(`${gatewayUrl}/readyz`, all, options.readyTimeoutMs);
    // The gateway needs one ready replica of each; the tests need all of them.
    await Promise.all(names.flatMap((n) => instances[n].map((i) => waitReadyH2(i.url, i.process))));
  } catch (e) {
    await Promise.all(all.map(stopProcess));
    throw e;
  }
  const replicas: { service: ServiceName; child: ChildProcess }[] = [];
  return {
    gatewayUrl,
    serviceUrls,
    processes,
    instances,
    natsPrefix,
    databases,
    async startReplica(service, replicaOptions = {}) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const env = { ...envOf(service), PORT: String(port), ...replicaOptions.env };
      const command = replicaOptions.command ?? service;
      const { readyLog } = replicaOptions;
      if (readyLog === undefined) {
        const child = startProcess(nodeArgs(options, command), env, logLevel);
        replicas.push({ service, child });
        await waitReadyH2(url, child);
        return { process: child, url };
      }
      let watch: ReturnType<typeof logged> | undefined;
      const child = startProcess(nodeArgs(options, command), env, logLevel, (chunk) => watch?.seen(chunk));
      watch = logged(child, readyLog);
      replicas.push({ service, child });
      await watch.ready;
      return { process: child, url: "" };
    },
    async kill(target, index = 0) {
      const child = target === "gateway" ? processes.gateway : instances[target][index]?.process;
      if (!child) throw new Error(`no process ${target}:${index}`);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGKILL");
      await exited;
    },
    async restart(target, index = 0) {
      const key = target === "gateway" ? "gateway" : `${target}:${index}`;
      const spec = started.get(key);
      if (!spec) throw new Error(`no process ${key}`);
      const child = startProcess(spec.args, spec.env, logLevel);
      if (target === "gateway") {
        processes.gateway = child;
        await waitReady(`${gatewayUrl}/readyz`, [child], options.readyTimeoutMs);
        return;
      }
      const instance = instances[target][index] as Replica;
      instance.process = child;
      if (index === 0) processes[target] = child;
      await waitReadyH2(instance.url, child, options.readyTimeoutMs);
    },
    async stop() {
      // Callers before the services they call: a client whose server goes away first may crash on
      // the GOAWAY (connectrpc/connect-es#1768), which is noise at the end of a test.
      await stopProcess(processes.gateway);
      for (const name of ["evaluation", "execution", "catalog", "identity"] as const) {
        await Promise.all(
          [
            ...instances[name].map((i) => i.process),
            ...replicas.filter((r) => r.service === name).map((r) => r.child),
          ].map(stopProcess),
        );
      }
    },
  };
}
