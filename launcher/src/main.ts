/**
 * `kiln [embedded|gateway|identity|catalog|execution|evaluation|evaluation-worker]`: one entry point for every
 * process, so one container image serves them all by its command.
 */

import { loadProvidersConfig, loadToolsConfig } from "@kiln/execution/config";
import { exitOnSignal } from "@kiln/kit/lifecycle";
import { createLogger } from "@kiln/kit/logger";
import { DISTRIBUTED_COMMANDS } from "./commands.js";
import { loadEmbeddedConfig } from "./config.js";
import { buildEmbedded } from "./embedded.js";

const command = process.argv[2] ?? "embedded";

if (command === "embedded") {
  const config = loadEmbeddedConfig();
  const logger = createLogger({ name: "kiln", level: config.LOG_LEVEL });
  const kiln = await buildEmbedded({
    logger,
    providers: loadProvidersConfig(),
    tools: loadToolsConfig(),
    rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
  });
  await kiln.gateway.app.listen({ host: config.HOST, port: config.PORT });
  const base = `http://${config.HOST === "0.0.0.0" ? "127.0.0.1" : config.HOST}:${config.PORT}`;
  process.stdout.write(
    [
      "",
      `Kiln (embedded: in-memory store, in-process bus, built-in issuer) listening on ${base}`,
      `  OpenAPI: ${base}/api/openapi.json`,
      "  Get an access token:",
      `    curl -s -X POST ${base}/api/auth/signup -H 'Content-Type: application/json' \\`,
      `      -d '{"email":"you@example.com","password":"correct-horse-battery","fullName":"You"}'`,
      "  Data lives as long as this process. Ctrl-C stops it.",
      "",
    ].join("\n"),
  );
  exitOnSignal(logger, 10_000, () => kiln.close());
} else if (DISTRIBUTED_COMMANDS[command]) {
  await DISTRIBUTED_COMMANDS[command].start();
} else {
  process.stderr.write(`unknown command "${command}": use embedded, ${Object.keys(DISTRIBUTED_COMMANDS).join(", ")}\n`);
  process.exit(2);
}
