/**
 * `kiln [embedded|gateway|identity|catalog|execution|evaluation|evaluation-worker]`: one entry point for every
 * process, so one container image serves them all by its command. `kiln backup <file>` and
 * `kiln restore <file>` copy the embedded platform's data directory; `kiln internal-token` signs a
 * token for calling the services directly; `kiln export` and `kiln import` move an organization's
 * bundle through the API (bundle-command.ts); `kiln mcp` serves Kiln's MCP server over stdio
 * (mcp-command.ts, docs/mcp.md).
 */

import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { reviewOptionsOf } from "@kiln/evaluation/config";
import { loadProvidersConfig, loadToolsConfig, loadTraceExportConfig } from "@kiln/execution/config";
import { loadModelRoutesConfig } from "@kiln/execution/model-routes-config";
import { corsOriginsOf } from "@kiln/gateway/config";
import { loadAuditOtlpConfig } from "@kiln/identity/config";
import { exitOnSignal } from "@kiln/kit/lifecycle";
import { createLogger } from "@kiln/kit/logger";
import { hostPatternsOf } from "@kiln/kit/outbound/host-config";
import { bundleCommand, CommandError } from "./bundle-command.js";
import { DISTRIBUTED_COMMANDS } from "./commands.js";
import { embeddedSecretKeys, loadEmbeddedConfig } from "./config.js";
import { internalTokenCommand, UsageError } from "./internal-token-command.js";
import { mcpCommand } from "./mcp-command.js";

const command = process.argv[2] ?? "embedded";

// What only one command needs is imported by that command: a service's process loads neither the
// embedded platform (every service, the SQLite store) nor what the other services use.
const dataDir = () => import("./data-dir.js");

/** console/dist of the checkout (`pnpm start`), or console/ beside the image's dist/. */
function defaultConsoleDir(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, "../../console/dist"), join(here, "../console")].find((d) => existsSync(join(d, "index.html")));
}

if (command === "embedded") {
  const [{ openEmbeddedData, IN_MEMORY }, { buildEmbedded }] = await Promise.all([dataDir(), import("./embedded.js")]);
  const config = loadEmbeddedConfig();
  const logger = createLogger({ name: "kiln", level: config.LOG_LEVEL });
  const secretKeys = embeddedSecretKeys(config);
  const data = await openEmbeddedData(config.KILN_DATA_DIR, { sync: config.KILN_DATA_SYNC, secretKeys }).catch(
    exitOnDataDirError,
  );
  const kiln = await buildEmbedded({
    data,
    logger,
    providers: loadProvidersConfig(),
    tools: loadToolsConfig(),
    rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
    corsOrigins: corsOriginsOf(config.CORS_ORIGINS),
    webhooks: {
      privateHosts: hostPatternsOf("WEBHOOK_PRIVATE_HOSTS", config.WEBHOOK_PRIVATE_HOSTS),
      deliveryRetentionMs: config.WEBHOOK_DELIVERY_RETENTION_DAYS * 24 * 3_600_000,
    },
    connections: { privateHosts: hostPatternsOf("PROVIDER_PRIVATE_HOSTS", config.PROVIDER_PRIVATE_HOSTS) },
    review: reviewOptionsOf(config),
    consoleDir: config.CONSOLE_DIR || defaultConsoleDir(),
    internalSecret: config.INTERNAL_AUTH_SECRET,
    runTraces: config.RUN_TRACES === "on",
    onlineScoreRetentionMs: config.ONLINE_SCORE_RETENTION_DAYS * 24 * 3_600_000,
    traceExport: loadTraceExportConfig(),
    traceIngestShare: config.TRACE_INGEST_SHARE,
    traceIngestIdleShare: config.TRACE_INGEST_IDLE_SHARE,
    maxAsyncAgentRuns: config.MAX_ASYNC_AGENT_RUNS,
    freePlanMonthlyRunLimit: config.FREE_PLAN_MONTHLY_RUN_LIMIT,
    auditStream: { otlp: loadAuditOtlpConfig() },
    modelRoutes: loadModelRoutesConfig(),
  });
  await kiln.gateway.app.listen({ host: config.HOST, port: config.PORT });
  // The port actually bound (PORT=0 picks a free one).
  const { port } = kiln.gateway.app.server.address() as AddressInfo;
  const reachable = (host: string, at: number) => `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${at}`;
  const base = reachable(config.HOST, port);
  const rpcHost = config.RPC_HOST || config.HOST;
  const rpcPort =
    config.RPC_PORT === "off"
      ? undefined
      : await kiln.listenRpc({ host: rpcHost, port: config.RPC_PORT }).then(
          (address) => Number(new URL(address).port),
          async (e: unknown) => {
            if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE") throw e;
            process.stderr.write(`RPC_PORT ${config.RPC_PORT} is in use: set another, 0 for a free one, or off\n`);
            await kiln.close();
            process.exit(1);
          },
        );
  // Before the banner: a signal sent as soon as it is read stops the platform gracefully too.
  exitOnSignal(logger, 10_000, () => kiln.close());
  process.stdout.write(
    [
      "",
      `Kiln (embedded: ${data.durable ? "durable" : "in-memory"} store, in-process bus, built-in issuer) listening on ${base}`,
      ...(existsSync(join(config.CONSOLE_DIR || defaultConsoleDir() || "-", "index.html"))
        ? [`  Console: ${base}/ (open it in a browser)`]
        : []),
      `  OpenAPI: ${base}/api/openapi.json`,
      ...(rpcPort === undefined
        ? []
        : [
            `  Internal RPC of every service (Connect, gRPC, gRPC-Web over h2c; reflection, health): ${reachable(rpcHost, rpcPort)}`,
          ]),
      "  Get an access token:",
      `    curl -s -X POST ${base}/api/auth/signup -H 'Content-Type: application/json' \\`,
      `      -d '{"email":"you@example.com","password":"correct-horse-battery","fullName":"You"}'`,
      data.durable
        ? `  Data: ${data.location} (KILN_DATA_DIR; delete it to start afresh, KILN_DATA_DIR=${IN_MEMORY} keeps nothing). Ctrl-C stops it.`
        : "  Data lives as long as this process (KILN_DATA_DIR=:memory:). Ctrl-C stops it.",
      "",
    ].join("\n"),
  );
} else if (command === "backup" || command === "restore") {
  const file = process.argv[3];
  if (!file) {
    process.stderr.write(`usage: kiln ${command} <file>   (the data directory is KILN_DATA_DIR, default .kiln)\n`);
    process.exit(2);
  }
  const { KILN_DATA_DIR: dir } = loadEmbeddedConfig();
  const { backupEmbeddedData, IN_MEMORY, restoreEmbeddedData } = await dataDir();
  if (dir === IN_MEMORY) {
    process.stderr.write(`KILN_DATA_DIR=${IN_MEMORY} has nothing to ${command}\n`);
    process.exit(2);
  }
  if (command === "backup") {
    await backupEmbeddedData(dir, file).catch(exitOnDataDirError);
    process.stdout.write(`backed up ${dir} to ${file}\n`);
  } else {
    await restoreEmbeddedData(dir, file).catch(exitOnDataDirError);
    process.stdout.write(`restored ${file} into ${dir}\n`);
  }
} else if (command === "internal-token") {
  try {
    process.stdout.write(`${await internalTokenCommand(process.argv.slice(3))}\n`);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
} else if (command === "export" || command === "import") {
  try {
    process.exitCode = await bundleCommand(command, process.argv.slice(3), {
      env: process.env,
      progress: (line) => process.stderr.write(`${line}\n`),
      out: (text) => process.stdout.write(text),
    });
  } catch (e) {
    if (!(e instanceof UsageError) && !(e instanceof CommandError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(e instanceof UsageError ? 2 : 1);
  }
} else if (command === "mcp") {
  try {
    await mcpCommand({ env: process.env });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
} else if (DISTRIBUTED_COMMANDS[command]) {
  await DISTRIBUTED_COMMANDS[command].start();
} else {
  process.stderr.write(
    `unknown command "${command}": use embedded, backup, restore, internal-token, export, import, mcp, ${Object.keys(DISTRIBUTED_COMMANDS).join(", ")}\n`,
  );
  process.exit(2);
}

/** A data directory that cannot be used is the operator's to fix: say why, without a stack trace. */
async function exitOnDataDirError(e: unknown): Promise<never> {
  if (!(e instanceof (await dataDir()).DataDirError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
}
