/**
 * Browser hardening over real HTTP (issue #32, docs/security.md "The console in the browser"): the
 * console's pages carry a Content-Security-Policy of the gateway's own origin and a frame ban;
 * every other answer (JSON, errors, assets, the OpenAI-compatible event stream) carries nosniff,
 * the referrer policy, the frame ban and a policy that allows nothing. The console's own pages in
 * a browser, with no CSP violation, are in console.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";
import { runIdentityFlow } from "./support/identity-flow.js";

let kiln: EmbeddedKiln;
let base: string;
let consoleDir: string;

beforeAll(async () => {
  // A console of one page and one asset: what is checked is how the gateway serves it.
  consoleDir = mkdtempSync(join(tmpdir(), "kiln-console-"));
  mkdirSync(join(consoleDir, "assets"));
  writeFileSync(join(consoleDir, "index.html"), '<!doctype html><script type="module" src="/assets/a.js"></script>');
  writeFileSync(join(consoleDir, "assets/a.js"), "export {};\n");
  ({ kiln, baseUrl: base } = await startEmbedded({ consoleDir }));
}, 60_000);

afterAll(async () => {
  await kiln?.close();
  rmSync(consoleDir, { recursive: true, force: true });
});

const EVERY_ANSWER = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
};
const NOTHING_ALLOWED = "default-src 'none'; frame-ancestors 'none'";

function headersOf(res: Response): Record<string, string | null> {
  return Object.fromEntries(
    [...Object.keys(EVERY_ANSWER), "content-security-policy"].map((name) => [name, res.headers.get(name)]),
  );
}

/** The policy's directives by name. */
function directives(policy: string | null | undefined): Record<string, string> {
  return Object.fromEntries(
    (policy ?? "")
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name as string, values.join(" ")]),
  );
}

describe("security headers", () => {
  it("serve the console's pages with a policy of the gateway's own origin", async () => {
    for (const path of ["/", "/prompts/abc"]) {
      const res = await fetch(`${base}${path}`, { headers: { accept: "text/html" } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/html");
      const headers = headersOf(res);
      expect(headers, path).toMatchObject(EVERY_ANSWER);
      expect(directives(headers["content-security-policy"]), path).toEqual({
        "default-src": "'self'",
        "script-src": "'self'",
        "style-src": "'self'",
        "connect-src": "'self'",
        "object-src": "'none'",
        "base-uri": "'self'",
        "form-action": "'self'",
        "frame-ancestors": "'none'",
      });
    }
  });

  it("serve assets, JSON answers and every kind of error with nosniff and a policy that allows nothing", async () => {
    const answers = {
      asset: await fetch(`${base}/assets/a.js`),
      health: await fetch(`${base}/healthz`),
      openapi: await fetch(`${base}/api/openapi.json`),
      unauthenticated: await fetch(`${base}/api/prompts`),
      "unknown route": await fetch(`${base}/api/nothing`, { headers: { accept: "text/html" } }),
      // Refused by Fastify before routing (frameworkErrors).
      "malformed URL": await fetch(`${base}/api/%zz`),
      "invalid JSON": await fetch(`${base}/api/auth/signup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{",
      }),
    };
    for (const [what, res] of Object.entries(answers)) {
      expect(headersOf(res), `${what} (${res.status})`).toEqual({
        ...EVERY_ANSWER,
        "content-security-policy": NOTHING_ALLOWED,
      });
    }
    expect(answers.asset.headers.get("content-type")).toContain("javascript");
    expect(answers.unauthenticated.status).toBe(401);
    expect(answers["malformed URL"].status).toBe(400);
  });

  it("sends the same headers on the OpenAI-compatible event stream, which bypasses Fastify's hooks", async () => {
    const flow = await runIdentityFlow(base, ["prompts:read", "runs:write"]);
    const api = createTestClient(base);
    const { prompt } = await api.createPublishedPrompt(flow.token, flow.organizationId, {
      model: "local/echo",
      systemPrompt: "Hello {{name}}",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${flow.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: `kiln/${prompt.id}`, messages: [], variables: { name: "Ada" }, stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(await res.text()).toContain("[DONE]");
    expect(headersOf(res)).toEqual({ ...EVERY_ANSWER, "content-security-policy": NOTHING_ALLOWED });
  });
});
