import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { httpAllowlistOf, loadConfig as loadCatalogConfig } from "@kiln/catalog/config";
import { loadToolsConfig } from "@kiln/execution/config";
import { createLogger } from "@kiln/kit/logger";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildEmbedded } from "./embedded.js";

/**
 * One allowlist from save to call, in the embedded mode: an `http` tool the catalog accepts under
 * a rule is called by execution under the same rule (the launcher hands both the parsed list),
 * whatever spelling the rule and the URL use. The forms themselves: kit/src/outbound/host-patterns.test.ts.
 */

// Every form a rule may take: upper case and a trailing dot, an IDN wildcard, an underscore,
// IPv4 and IPv6 in non-canonical spellings, separated by commas, spaces and a line break.
const RULES = "API.Weather.test., *.Bücher.example api_x.test\n127.1 [0:0::1] Localhost";

type Embedded = Awaited<ReturnType<typeof buildEmbedded>>;

let kiln: Embedded;
let api: TestClient;
let member: { token: string; organizationId: string };
const servers: Server[] = [];
let port4 = 0;
let port6 = 0;
/** The names execution resolved, each answered 127.0.0.1. */
const questions: string[] = [];

async function listen(host: string): Promise<number> {
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ host: req.headers.host }));
  });
  server.listen(0, host);
  await once(server, "listening");
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  port4 = await listen("127.0.0.1");
  port6 = await listen("::1");
  kiln = await buildEmbedded({
    logger: createLogger({ name: "test", level: "silent" }),
    tools: {
      // Loopback is where the test server is: every allowed host may reach private addresses.
      ...loadToolsConfig({ HTTP_TOOL_ALLOWED_HOSTS: RULES, HTTP_TOOL_PRIVATE_HOSTS: RULES }),
      resolve: async (hostname) => {
        questions.push(hostname);
        return [{ address: "127.0.0.1", family: 4 }];
      },
    },
  });
  api = createTestClient(kiln.gateway.app);
  const user = await api.signUp();
  const onboarding = await api.onboard(user.accessToken);
  member = { token: user.accessToken, organizationId: onboarding.organization.id };
});

afterAll(async () => {
  await kiln?.close();
  for (const server of servers) server.close();
});

/** URL as the tool's author writes it (`P4`/`P6`: the IPv4/IPv6 server's port) → the Host header it arrives with. */
const CALLABLE: [string, string][] = [
  ["http://api.weather.test:P4/", "api.weather.test:P4"],
  ["http://API.WEATHER.TEST.:P4/", "api.weather.test.:P4"],
  ["http://shop.bücher.example:P4/", "shop.xn--bcher-kva.example:P4"],
  ["http://shop.xn--bcher-kva.example:P4/", "shop.xn--bcher-kva.example:P4"],
  ["http://a.b.BÜCHER.example:P4/", "a.b.xn--bcher-kva.example:P4"],
  ["http://api_x.test:P4/", "api_x.test:P4"],
  ["http://localhost:P4/", "localhost:P4"],
  ["http://127.0.0.1:P4/", "127.0.0.1:P4"],
  ["http://127.1:P4/", "127.0.0.1:P4"],
  ["http://0x7f.0.0.1:P4/", "127.0.0.1:P4"],
  ["http://[::1]:P6/", "[::1]:P6"],
  ["http://[0:0::1]:P6/", "[::1]:P6"],
];

/** URL → the host the refusal names. */
const REFUSED: [string, string][] = [
  ["http://weather.test:P4/", "weather.test"],
  ["http://x.api.weather.test:P4/", "x.api.weather.test"],
  ["http://bücher.example:P4/", "xn--bcher-kva.example"],
  ["http://x.api_x.test:P4/", "x.api_x.test"],
  ["http://apix.test:P4/", "apix.test"],
  ["http://127.0.0.2:P4/", "127.0.0.2"],
  ["http://[::2]:P6/", "[::2]"],
  ["http://localhost.localdomain:P4/", "localhost.localdomain"],
];

const withPorts = (text: string) => text.replace("P4", String(port4)).replace("P6", String(port6));

const saveTool = (url: string) =>
  api.post<{ id: string; message?: string }>(
    "/api/tools",
    {
      organizationId: member.organizationId,
      toolKey: `fetch_${Math.random().toString(36).slice(2, 10)}`,
      name: "Fetch",
      type: "http",
      config: { url, method: "GET" },
      inputSchema: { type: "object" },
    },
    { token: member.token },
  );

describe("one host allowlist from save to call (embedded)", () => {
  it("gives the catalog the allowlist execution reads, as the catalog's own loader reads it", () => {
    const env = { HTTP_TOOL_ALLOWED_HOSTS: RULES };
    const base = {
      MONGODB_URL: "x",
      INTERNAL_AUTH_SECRET: "x".repeat(32),
      NATS_URL: "x",
      IDENTITY_URL: "x",
      EVALUATION_URL: "x",
      EXECUTION_URL: "x",
    };
    expect(loadToolsConfig(env).allowlist).toEqual(httpAllowlistOf(loadCatalogConfig({ ...base, ...env })));
  });

  it.each(CALLABLE)("saves %s and calls it under the same rule", async (written, arrivesAs) => {
    const url = withPorts(written);
    const saved = await saveTool(url);
    expect(saved.status, saved.text).toBe(201);
    const { prompt } = await api.createPublishedPrompt(member.token, member.organizationId, {
      systemPrompt: "Call the tool.",
      model: "local/echo",
      tools: [saved.body.id],
    });
    // local/echo calls each offered tool once.
    const run = await api.post<{ status: string; toolCalls: { output: unknown; error?: unknown }[] }>(
      `/api/prompts/${prompt.id}/run`,
      { organizationId: member.organizationId, variables: {} },
      { token: member.token },
    );
    expect(run.status, run.text).toBe(201);
    expect(run.body.toolCalls).toHaveLength(1);
    expect(run.body.toolCalls[0]?.error).toBeUndefined();
    expect(run.body.toolCalls[0]?.output).toEqual({ host: withPorts(arrivesAs) });
  });

  it.each(REFUSED)("refuses to save %s", async (written, host) => {
    const saved = await saveTool(withPorts(written));
    expect(saved.status, saved.text).toBe(400);
    expect(saved.body).toMatchObject({
      error: {
        code: "invalid_argument",
        details: [{ field: "config.url", issue: `host "${host}" is not on the allowlist of this deployment` }],
      },
    });
  });

  it("resolved only names, as written in the URL", () => {
    expect(new Set(questions)).toEqual(
      new Set([
        "api.weather.test",
        "api.weather.test.",
        "shop.xn--bcher-kva.example",
        "a.b.xn--bcher-kva.example",
        "api_x.test",
        "localhost",
      ]),
    );
  });
});
