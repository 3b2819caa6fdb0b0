/**
 * The Kubernetes manifests agree with the code (docs/deploy.md "What validated means"). The
 * overlays are rendered with kustomize (scripts/ensure-deploy-tools.sh builds it) and checked
 * against what the processes really read and serve:
 * - each container's argument is a launcher command, and its variables (ConfigMap keys and
 *   explicit env) are exactly variables its config schema names, with every required one given
 *   and every value accepted by the schema;
 * - ports, probes, Services, autoscalers, disruption budgets and network policies point at what
 *   exists, and every call a *_URL configures is allowed by a NetworkPolicy;
 * - then the prod overlay's processes are started as the image starts them (the app tree made by
 *   the Dockerfile's build commands from the files its .dockerignore lets through, its ENTRYPOINT,
 *   the manifest's argument and environment, with the in-cluster addresses pointed at local ones)
 *   and probed the way the kubelet probes them, then stopped with SIGTERM within their termination
 *   grace period.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseEnv } from "@kiln/kit/config";
import { DISTRIBUTED_COMMANDS } from "@kiln/launcher/commands";
import { Health, HealthCheckResponse_ServingStatus } from "@kiln/proto/health";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { newSigningKeyPem } from "./support/distributed.js";
import { callUnary } from "./support/grpc-js.js";
import { findBinary, freePort } from "./support/servers.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OVERLAYS = ["dev", "prod"] as const;

// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects are read loosely and asserted on.
type K8sObject = any;

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}

interface Probe {
  httpGet?: { path: string; port: string | number };
  grpc?: { port: number; service?: string };
}

function render(overlay: string): K8sObject[] {
  const kustomize = findBinary("kustomize", "KUSTOMIZE_BIN", [join(process.env.HOME ?? "", ".local/bin")]);
  const out = spawnSync(kustomize, ["build", join(ROOT, "deploy/overlays", overlay)], { encoding: "utf8" });
  if (out.status !== 0) throw new Error(`kustomize build ${overlay} failed: ${out.stderr}`);
  return parseAllDocuments(out.stdout).map((d) => d.toJS());
}

const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);

function matches(selector: Record<string, string>, labels: Record<string, string> = {}) {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** Label selector with matchLabels and matchExpressions (In only, all the manifests use). */
function selects(
  selector: {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values: string[] }[];
  },
  labels: Record<string, string>,
) {
  return (
    matches(selector.matchLabels ?? {}, labels) &&
    (selector.matchExpressions ?? []).every((e) => e.operator === "In" && e.values.includes(labels[e.key] ?? ""))
  );
}

/** The workloads (Deployments and StatefulSets) whose pods a selector picks. */
function workloadsSelected(objects: K8sObject[], selector: Record<string, string>) {
  return objects.filter(
    (o) => (o.kind === "Deployment" || o.kind === "StatefulSet") && matches(selector, o.spec.template.metadata.labels),
  );
}

/** The container's environment as the kubelet builds it: ConfigMap keys, then explicit env. */
function environmentOf(objects: K8sObject[], container: Container) {
  const values: Record<string, string> = {};
  const secrets: Record<string, { name: string; key: string }> = {};
  for (const from of container.envFrom ?? []) {
    const name = from.configMapRef?.name;
    const map = byKind(objects, "ConfigMap").find((m) => m.metadata.name === name);
    expect(map, `ConfigMap ${name}`).toBeDefined();
    Object.assign(values, map.data);
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined) values[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef) secrets[e.name] = e.valueFrom.secretKeyRef;
    else throw new Error(`${container.name}: ${e.name} has neither a value nor a secret`);
  }
  return { values, secrets };
}

/** Variables a process reads: its schema's keys plus those OPENAI_COMPATIBLE_PROVIDERS names in apiKeyEnv. */
function variablesRead(command: string, values: Record<string, string>) {
  const schema = DISTRIBUTED_COMMANDS[command]?.env;
  if (!schema) throw new Error(`no launcher command ${command}`);
  const named = new Set(Object.keys(schema.properties));
  const providers = values.OPENAI_COMPATIBLE_PROVIDERS;
  if (providers)
    for (const p of JSON.parse(providers) as { apiKeyEnv?: string }[]) if (p.apiKeyEnv) named.add(p.apiKeyEnv);
  return { schema, named };
}

const appDeployments = (objects: K8sObject[]) => byKind(objects, "Deployment");
const containerOf = (deployment: K8sObject): Container => deployment.spec.template.spec.containers[0];
const commandOf = (deployment: K8sObject) => containerOf(deployment).args?.[0] ?? "";

/** The listening port a process gets: PORT, else its schema's default. */
function portOf(command: string, values: Record<string, string>): number {
  const schema = DISTRIBUTED_COMMANDS[command]?.env;
  return Number(values.PORT ?? (schema?.properties.PORT as { default?: number } | undefined)?.default);
}

/** The in-namespace Service a URL names (`kiln-x`, `kiln-x.ns`, `kiln-x.ns.svc.cluster.local`). */
function serviceOfUrl(objects: K8sObject[], url: string) {
  const host = new URL(url).hostname.split(".")[0];
  return byKind(objects, "Service").find((s) => s.metadata.name === host);
}

/** The repository's files a `docker build` with deploy/Dockerfile.dockerignore would send. */
function dockerContext(): string[] {
  const rules = readFileSync(join(ROOT, "deploy/Dockerfile.dockerignore"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => ({ include: l.startsWith("!"), pattern: globToRegExp(l.replace(/^!/, "")) }));
  const files = spawnSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  // As Docker does: the last rule matching the path or one of its parent directories decides.
  return files.filter((file) => {
    const prefixes = file.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"));
    let excluded = false;
    for (const rule of rules) if (prefixes.some((p) => rule.pattern.test(p))) excluded = !rule.include;
    return !excluded;
  });
}

/** `**` any depth (also none), `*` within one path segment. */
function globToRegExp(glob: string): RegExp {
  const literal = (t: string) => t.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  const body = glob
    .split("**/")
    .map((part) =>
      part
        .split("**")
        .map((p) => p.split("*").map(literal).join("[^/]*"))
        .join(".*"),
    )
    .join("(?:.*/)?");
  return new RegExp(`^${body}$`);
}

describe.each(OVERLAYS)("deploy/overlays/%s", (overlay) => {
  const objects = render(overlay);

  it("runs every distributed process once, each with its own launcher command", () => {
    const commands = appDeployments(objects).map(commandOf).sort();
    expect(commands).toEqual(Object.keys(DISTRIBUTED_COMMANDS).sort());
    for (const d of appDeployments(objects)) {
      const c = containerOf(d);
      expect(d.spec.template.spec.containers).toHaveLength(1);
      // The image's ENTRYPOINT is the launcher; the manifest only names the process.
      expect(c.command).toBeUndefined();
      expect(c.args).toHaveLength(1);
      expect(d.metadata.name).toBe(`kiln-${commandOf(d)}`);
    }
  });

  it("gives each process exactly the variables its config schema reads, all required ones, and values it accepts", async () => {
    const signingKey = await newSigningKeyPem();
    for (const d of appDeployments(objects)) {
      const command = commandOf(d);
      const { values, secrets } = environmentOf(objects, containerOf(d));
      const { schema, named } = variablesRead(command, values);
      const given = [...Object.keys(values), ...Object.keys(secrets)];
      expect(
        given.filter((v) => !named.has(v)),
        `${command}: variables it does not read`,
      ).toEqual([]);
      // Secret values are not in the manifests: stand-ins of the right shape for the schema check.
      const stand = (name: string) =>
        name === "IDENTITY_SIGNING_KEY"
          ? signingKey
          : name === "MONGODB_URL"
            ? "mongodb://db"
            : name.startsWith("KILN_SECRET_KEY")
              ? randomBytes(32).toString("base64")
              : "s".repeat(40);
      const env = { ...values, ...Object.fromEntries(Object.keys(secrets).map((n) => [n, stand(n)])) };
      expect(() => parseEnv(schema, env), command).not.toThrow();
      const required = (schema.required ?? []).filter(
        (k: string) => (schema.properties[k] as { default?: unknown }).default === undefined,
      );
      expect(
        required.filter((k: string) => !given.includes(k)),
        `${command}: required variables missing`,
      ).toEqual([]);
      for (const ref of Object.values(secrets)) expect(["kiln-secrets"]).toContain(ref.name);
    }
  });

  it("declares the port each process listens on and probes it the way it serves", () => {
    for (const d of appDeployments(objects)) {
      const command = commandOf(d);
      const c = containerOf(d);
      const port = portOf(command, environmentOf(objects, c).values);
      expect(c.ports, command).toHaveLength(1);
      expect(c.ports?.[0]?.containerPort, command).toBe(port);
      const probes = [c.startupProbe, c.livenessProbe, c.readinessProbe];
      expect(probes.every(Boolean), command).toBe(true);
      if (command === "gateway") {
        // The gateway speaks HTTP/1.1: plain HTTP probes on its named port.
        expect(c.ports?.[0]?.name).toBe("http");
        for (const p of probes) expect(p?.httpGet?.port).toBe("http");
        expect(c.livenessProbe?.httpGet?.path).toBe("/healthz");
        expect(c.readinessProbe?.httpGet?.path).toBe("/readyz");
      } else {
        // Services and workers speak h2c only: gRPC health probes, "readiness" for readiness.
        for (const p of probes) expect(p?.grpc?.port, command).toBe(port);
        expect(c.livenessProbe?.grpc?.service ?? "").toBe("");
        expect(c.readinessProbe?.grpc?.service).toBe("readiness");
      }
    }
  });

  it("gives each process a termination grace period longer than its SHUTDOWN_GRACE_MS and preStop", () => {
    for (const d of appDeployments(objects)) {
      const c = containerOf(d);
      const { values } = environmentOf(objects, c);
      const graceMs = Number(values.SHUTDOWN_GRACE_MS ?? 20_000);
      const sleep = c.lifecycle?.preStop?.exec?.command;
      const preStopSeconds = sleep?.[0] === "sleep" ? Number(sleep[1]) : 0;
      // exitOnSignal gives up one second after the grace period.
      expect(d.spec.template.spec.terminationGracePeriodSeconds, commandOf(d)).toBeGreaterThanOrEqual(
        preStopSeconds + graceMs / 1000 + 2,
      );
    }
  });

  it("points every Service, autoscaler and disruption budget at a workload and its ports", () => {
    for (const s of byKind(objects, "Service")) {
      const [workload, more] = workloadsSelected(objects, s.spec.selector);
      expect(workload, s.metadata.name).toBeDefined();
      expect(more, s.metadata.name).toBeUndefined();
      const ports = workload.spec.template.spec.containers.flatMap((c: Container) => c.ports ?? []);
      for (const p of s.spec.ports) {
        const target = ports.find((cp: { name?: string; containerPort: number }) =>
          typeof p.targetPort === "string" ? cp.name === p.targetPort : cp.containerPort === (p.targetPort ?? p.port),
        );
        expect(target, `${s.metadata.name} port ${p.name}`).toBeDefined();
        // A headless Service is no proxy: callers dial the pod on the Service's port.
        if (s.spec.clusterIP === "None") expect(target.containerPort, s.metadata.name).toBe(p.port);
      }
    }
    for (const h of byKind(objects, "HorizontalPodAutoscaler")) {
      const ref = h.spec.scaleTargetRef;
      expect(
        objects.find((o) => o.kind === ref.kind && o.metadata.name === ref.name),
        h.metadata.name,
      ).toBeDefined();
      expect(h.spec.minReplicas).toBeLessThanOrEqual(h.spec.maxReplicas);
    }
    for (const p of byKind(objects, "PodDisruptionBudget")) {
      expect(workloadsSelected(objects, p.spec.selector.matchLabels), p.metadata.name).toHaveLength(1);
    }
    const withHpa = new Set(byKind(objects, "HorizontalPodAutoscaler").map((h) => h.spec.scaleTargetRef.name));
    for (const d of appDeployments(objects)) expect(withHpa.has(d.metadata.name), d.metadata.name).toBe(true);
  });

  it("lets in from outside only the gateway, and allows every call a *_URL configures", () => {
    const policies = byKind(objects, "NetworkPolicy");
    const pods = [...byKind(objects, "Deployment"), ...byKind(objects, "StatefulSet")].map(
      (w) => w.spec.template.metadata.labels as Record<string, string>,
    );
    // Every pod is under the default deny.
    const denyAll = policies.find((p) => Object.keys(p.spec.podSelector).length === 0);
    expect(denyAll?.spec.ingress ?? []).toEqual([]);
    // Rules without `from` admit anyone: only the gateway has one.
    const open = policies.filter((p) => (p.spec.ingress ?? []).some((r: { from?: unknown }) => !r.from));
    expect(open.map((p) => p.spec.podSelector.matchLabels?.["app.kubernetes.io/component"])).toEqual(["gateway"]);
    expect(pods.length).toBeGreaterThan(6);

    const allowed = (from: Record<string, string>, to: Record<string, string>, portName: string, port: number) =>
      policies.some(
        (p) =>
          selects(p.spec.podSelector, to) &&
          (p.spec.ingress ?? []).some(
            (r: { from?: { podSelector: never }[]; ports?: { port: string | number }[] }) =>
              (r.from ?? []).some((f) => selects(f.podSelector, from)) &&
              (r.ports ?? []).some((rp) => rp.port === portName || rp.port === port),
          ),
      );
    let calls = 0;
    for (const d of appDeployments(objects)) {
      const { values } = environmentOf(objects, containerOf(d));
      for (const [name, value] of Object.entries(values)) {
        if (!name.endsWith("_URL") || !/^(https?|nats):\/\//.test(value)) continue;
        const service = serviceOfUrl(objects, value);
        expect(service, `${commandOf(d)} ${name}=${value}`).toBeDefined();
        const port = Number(new URL(value).port);
        const servicePort = service.spec.ports.find((p: { port: number }) => p.port === port);
        expect(servicePort, `${commandOf(d)} ${name}: no port ${port} on ${service.metadata.name}`).toBeDefined();
        const [target] = workloadsSelected(objects, service.spec.selector);
        const targetPort = target.spec.template.spec.containers
          .flatMap((c: Container) => c.ports ?? [])
          .find((cp: { name?: string }) => cp.name === servicePort.targetPort);
        expect(
          allowed(
            d.spec.template.metadata.labels,
            target.spec.template.metadata.labels,
            servicePort.targetPort,
            targetPort.containerPort,
          ),
          `${commandOf(d)} → ${name}`,
        ).toBe(true);
        calls++;
      }
    }
    expect(calls).toBeGreaterThanOrEqual(12);
  });

  it("uses values the API server accepts where the schemas take any string or number", () => {
    // kubectl-validate checks types only: these are the API server's own rules the manifests touch.
    const intOrPercent = (v: unknown) => (typeof v === "number" && v >= 0) || /^\d+%$/.test(String(v));
    const portName = (v: unknown) =>
      typeof v === "string" && /^(?=.*[a-z])[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(v) && v.length <= 15;
    const port = (v: unknown) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65_535;
    for (const o of objects) {
      const what = `${o.kind}/${o.metadata.name}`;
      expect(o.metadata.name, what).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      if (o.kind === "PodDisruptionBudget") {
        for (const v of [o.spec.maxUnavailable, o.spec.minAvailable].filter((x) => x !== undefined))
          expect(intOrPercent(v), what).toBe(true);
      }
      if (o.kind === "Deployment") {
        const { maxSurge, maxUnavailable } = o.spec.strategy.rollingUpdate;
        expect(intOrPercent(maxSurge) && intOrPercent(maxUnavailable), what).toBe(true);
      }
      if (o.kind === "Service") {
        for (const p of o.spec.ports) {
          expect(port(p.port) && portName(p.name), what).toBe(true);
          expect(typeof p.targetPort === "string" ? portName(p.targetPort) : port(p.targetPort), what).toBe(true);
        }
      }
      if (o.kind === "Deployment" || o.kind === "StatefulSet") {
        for (const c of [...o.spec.template.spec.containers, ...(o.spec.template.spec.initContainers ?? [])]) {
          for (const p of c.ports ?? [])
            expect(port(p.containerPort) && portName(p.name), `${what} ${c.name}`).toBe(true);
          for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe].filter(Boolean)) {
            const target = probe.httpGet?.port ?? probe.grpc?.port;
            if (target !== undefined)
              expect(typeof target === "string" ? portName(target) : port(target), what).toBe(true);
          }
          expect(c.imagePullPolicy ?? "IfNotPresent", what).toMatch(/^(Always|IfNotPresent|Never)$/);
        }
      }
    }
  });

  it("runs every process as the image's non-root user on a read-only root filesystem", () => {
    const dockerfile = readFileSync(join(ROOT, "deploy/Dockerfile"), "utf8");
    const user = /^USER (\d+):(\d+)$/m.exec(dockerfile);
    expect(user).not.toBeNull();
    for (const d of appDeployments(objects)) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: Number(user?.[1]) });
      expect(containerOf(d)).toMatchObject({
        securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
      });
      expect(pod.volumes.find((v: { name: string }) => v.name === "tmp")).toMatchObject({ emptyDir: {} });
    }
  });
});

describe("the prod overlay's processes, started as the image starts them", () => {
  const objects = render("prod");
  const run = randomBytes(3).toString("hex");
  let tree: string;
  const started: { command: string; child: ChildProcess; port: number; container: Container; graceSeconds: number }[] =
    [];

  beforeAll(async () => {
    // The image's app tree, made by the Dockerfile's own build commands in a copy of the build
    // context its .dockerignore lets through.
    tree = mkdtempSync(join(tmpdir(), "kiln-image-"));
    const context = mkdtempSync(join(tmpdir(), "kiln-context-"));
    const dockerfile = readFileSync(join(ROOT, "deploy/Dockerfile"), "utf8");
    try {
      for (const file of dockerContext()) cpSync(join(ROOT, file), join(context, file));
      const build = dockerfile.slice(0, dockerfile.lastIndexOf("\nFROM "));
      const runs = [...build.matchAll(/^RUN (.*)$/gm)].map((m) => m[1] ?? "");
      // pnpm itself is installed here already; the deploy writes to the test's directory, not /app.
      for (const command of runs.filter((r) => !r.startsWith("npm install -g pnpm"))) {
        const made = spawnSync(command.replace(/ \/app(?=\/|$)/g, ` ${tree}`), {
          cwd: context,
          shell: true,
          encoding: "utf8",
        });
        expect(made.status, `${command}: ${made.stderr}`).toBe(0);
      }
    } finally {
      rmSync(context, { recursive: true, force: true });
    }
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1] ?? "[]") as string[];
    expect(entrypoint.slice(0, 1)).toEqual(["node"]);
    // Built JavaScript, no TypeScript loader in the image.
    expect(entrypoint.join(" ")).not.toMatch(/tsx|\.ts\b/);
    expect(existsSync(join(tree, "node_modules", "tsx"))).toBe(false);

    const deployments = appDeployments(objects);
    const ports = new Map<string, number>();
    for (const d of deployments) ports.set(d.metadata.name, await freePort());
    const secrets: Record<string, string> = {
      INTERNAL_AUTH_SECRET: randomBytes(32).toString("base64url"),
      IDENTITY_SIGNING_KEY: await newSigningKeyPem(),
      MONGODB_URL: inject("mongoUrl"),
      KILN_SECRET_KEY: randomBytes(32).toString("base64"),
    };
    // In-cluster addresses become local ones; the names still go through the resolver (localhost).
    const localUrl = (value: string) => {
      const service = serviceOfUrl(objects, value);
      if (!service) return value;
      if (service.metadata.name === "kiln-nats") return inject("natsUrl");
      const [target] = workloadsSelected(objects, service.spec.selector);
      return `http://localhost:${ports.get(target.metadata.name)}`;
    };
    for (const d of deployments) {
      const container = containerOf(d);
      const { values, secrets: refs } = environmentOf(objects, container);
      const env: Record<string, string> = {};
      for (const [name, value] of Object.entries(values)) env[name] = name.endsWith("_URL") ? localUrl(value) : value;
      // Paths into the image (CONSOLE_DIR=/app/console) point into the tree the build made.
      for (const [name, value] of Object.entries(env))
        if (value.startsWith("/app/")) env[name] = join(tree, value.slice(5));
      for (const name of Object.keys(refs)) if (secrets[name]) env[name] = secrets[name];
      const port = ports.get(d.metadata.name) ?? 0;
      // Only what must differ on a shared test machine: the port, database names and NATS namespace.
      Object.assign(env, { PORT: String(port), HOST: "127.0.0.1", NATS_PREFIX: `deploy-${run}`, LOG_LEVEL: "warn" });
      if (env.MONGODB_DATABASE) env.MONGODB_DATABASE = `${env.MONGODB_DATABASE}_${run}`;
      // NATS_STREAM_REPLICAS=3 needs a 3-node cluster; the test server is one node.
      if (env.NATS_STREAM_REPLICAS) env.NATS_STREAM_REPLICAS = "1";
      const child = spawn(entrypoint[0] ?? "node", [...entrypoint.slice(1), ...(container.args ?? [])], {
        cwd: tree,
        env: { PATH: process.env.PATH ?? "", ...env },
        stdio: ["ignore", "ignore", "pipe"],
      });
      child.stderr?.on("data", (chunk: Buffer) => process.stderr.write(`[${commandOf(d)}] ${chunk}`));
      started.push({
        command: commandOf(d),
        child,
        port,
        container,
        graceSeconds: d.spec.template.spec.terminationGracePeriodSeconds,
      });
    }
  }, 120_000);

  afterAll(async () => {
    for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
    if (tree) rmSync(tree, { recursive: true, force: true });
  });

  /**
   * One probe as the kubelet runs it, on the process's local port (the manifest's probe ports were
   * checked against containerPort above): HTTP/1.1 GET (2xx/3xx) or grpc.health.v1 Check (SERVING).
   */
  async function probe(port: number, p: Probe | undefined): Promise<boolean> {
    if (p?.httpGet) {
      const res = await fetch(`http://127.0.0.1:${port}${p.httpGet.path}`).catch(() => undefined);
      return res !== undefined && res.status >= 200 && res.status < 400;
    }
    if (p?.grpc) {
      const check = { service: p.grpc.service ?? "" };
      const res = await callUnary(`127.0.0.1:${port}`, Health, Health.method.check, check, {}).catch(() => undefined);
      return res?.status === HealthCheckResponse_ServingStatus.SERVING;
    }
    throw new Error("a probe of another kind");
  }

  it("passes its startup, liveness and readiness probes", async () => {
    const deadline = Date.now() + 90_000;
    for (const s of started) {
      for (const p of [s.container.startupProbe, s.container.livenessProbe, s.container.readinessProbe]) {
        while (!(await probe(s.port, p))) {
          if (s.child.exitCode !== null) throw new Error(`${s.command} exited with ${s.child.exitCode}`);
          if (Date.now() > deadline) throw new Error(`${s.command}: probe ${JSON.stringify(p)} never passed`);
          await sleep(250);
        }
      }
    }
  }, 120_000);

  it("serves the console at / from the gateway, as the image ships it", async () => {
    const gateway = started.find((x) => x.command === "gateway");
    const res = await fetch(`http://127.0.0.1:${gateway?.port}/prompts`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<div id="root">');
  });

  it("exits 0 on SIGTERM within its termination grace period", async () => {
    // Callers first, as a rolling update of everything would end.
    const order = ["gateway", "evaluation-worker", "evaluation", "execution", "catalog", "identity"];
    for (const command of order) {
      const s = started.find((x) => x.command === command);
      if (!s) throw new Error(`${command} was not started`);
      const exited = new Promise<number | null>((resolve) => s.child.once("exit", (code) => resolve(code)));
      const t0 = Date.now();
      s.child.kill("SIGTERM");
      expect(await exited, command).toBe(0);
      expect(Date.now() - t0, command).toBeLessThan(s.graceSeconds * 1000);
    }
  }, 120_000);
});
