/**
 * Bad text in every string field of every JSON request body (issue #32), in both run modes: the
 * fields come from the live OpenAPI document, so a new route is covered from the day it exists.
 * A lone UTF-16 surrogate (which JSON can spell and protobuf cannot carry) answers 400 naming the
 * field; NUL and other control characters answer a refusal naming the field or are stored; nothing
 * answers 5xx.
 */
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";

const modes = [
  {
    name: "embedded mode",
    async start() {
      const { kiln, baseUrl } = await startEmbedded({ rateLimitPerMinute: 0 });
      return { base: baseUrl, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start() {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        env: { RATE_LIMIT_PER_MINUTE: "0" },
      });
      return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minItems?: number;
  minimum?: number;
}
interface OpenApi {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
  components: { schemas: Record<string, Schema> };
}

/** A path into a body: property names and array positions. */
type Path = (string | number)[];

const LONE_SURROGATE = "\ud800x\udfff\u0000";
const NUL = "a\u0000b";
const CONTROL = "a\u0001b\tc\u001b[31m\u007f";

const fieldOf = (path: Path) =>
  path.reduce<string>((at, p) => (typeof p === "number" ? `${at}[${p}]` : at ? `${at}.${p}` : p), "");

function walker(doc: OpenApi) {
  const resolve = (s: Schema | undefined): Schema => {
    let schema = s ?? {};
    while (schema.$ref) schema = doc.components.schemas[schema.$ref.split("/").pop() ?? ""] ?? {};
    return schema;
  };
  const types = (s: Schema) => ([] as string[]).concat(s.type ?? []);

  /** A small value of the schema's shape: required properties, the first branch, the first enum value. */
  const example = (s0: Schema | undefined, depth = 0): unknown => {
    const s = resolve(s0);
    if (depth > 8) return null;
    if (s.const !== undefined) return s.const;
    if (s.enum) return s.enum[0];
    const branch = s.oneOf?.[0] ?? s.anyOf?.[0];
    if (branch && !s.type) return example(branch, depth + 1);
    const t = types(s);
    if (t.includes("object") || s.properties) {
      return Object.fromEntries((s.required ?? []).map((k) => [k, example(s.properties?.[k], depth + 1)]));
    }
    if (t.includes("array")) return Array.from({ length: s.minItems ?? 0 }, () => example(s.items, depth + 1));
    if (t.includes("string")) return s.pattern ? "ab" : "x";
    if (t.includes("integer") || t.includes("number")) return s.minimum ?? 1;
    if (t.includes("boolean")) return false;
    return null;
  };

  /** Every path that leads to a string, through objects, arrays (position 0) and branches. */
  const stringPaths = (s0: Schema | undefined, path: Path, seen: Set<Schema>, out: Path[]) => {
    const s = resolve(s0);
    if (seen.has(s) || path.length > 6) return;
    const inner = new Set(seen).add(s);
    for (const b of [...(s.oneOf ?? []), ...(s.anyOf ?? [])]) stringPaths(b, path, inner, out);
    const t = types(s);
    if (t.includes("string") && s.const === undefined && !s.enum) out.push(path);
    if (t.includes("array")) stringPaths(s.items, [...path, 0], inner, out);
    for (const [k, v] of Object.entries(s.properties ?? {})) stringPaths(v, [...path, k], inner, out);
  };

  /** The example body with `value` at `path` (containers made on the way). */
  const bodyWith = (schema: Schema, path: Path, value: string): unknown => {
    const body = (example(schema) ?? {}) as Record<string | number, unknown>;
    let at: Record<string | number, unknown> = body;
    path.forEach((p, i) => {
      if (i === path.length - 1) {
        at[p] = value;
        return;
      }
      const next = path[i + 1];
      if (typeof at[p] !== "object" || at[p] === null) at[p] = typeof next === "number" ? [] : {};
      at = at[p] as Record<string | number, unknown>;
    });
    return body;
  };

  const operations = () =>
    Object.entries(doc.paths).flatMap(([route, ops]) =>
      Object.entries(ops).flatMap(([method, op]) => {
        const schema = op.requestBody?.content?.["application/json"]?.schema;
        if (!schema) return [];
        const paths: Path[] = [];
        stringPaths(schema, [], new Set(), paths);
        return [{ method: method.toUpperCase(), route, schema: resolve(schema), paths }];
      }),
    );
  return { operations, bodyWith };
}

describe.each(modes)("bad text in $name", (mode) => {
  let running: Awaited<ReturnType<(typeof modes)[number]["start"]>>;
  let api: TestClient;
  let token: string;
  let organizationId: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    ({ accessToken: token } = await api.signUp());
    ({
      organization: { id: organizationId },
    } = await api.onboard(token));
    const { prompt } = await api.createPublishedPrompt(token, organizationId, { systemPrompt: "Hi" });
    const skill = await api.createSkill(token, organizationId);
    const tool = await api.createTool(token, organizationId);
    ids = { prompts: prompt.id, skills: skill.id, tools: tool.id, "skill-versions": skill.draftVersionId ?? "x" };
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  /** A route with its ids filled in: the caller's own objects where the collection is known. */
  const urlOf = (route: string) =>
    route.replace(/\/([a-z-]+)\/\{(\w+)\}/g, (_m, collection: string, param: string) => {
      if (param === "id" && collection === "organizations") return `/${collection}/${organizationId}`;
      return `/${collection}/${param === "id" ? (ids[collection] ?? "none") : "none"}`;
    });

  it("refuses a lone surrogate in every string field with 400 naming it, and answers no 5xx to control characters", async () => {
    const doc = (await api.get<OpenApi>("/api/openapi.json")).body;
    const { operations, bodyWith } = walker(doc);
    let fields = 0;
    const statuses: Record<string, number> = {};
    for (const op of operations()) {
      for (const path of op.paths) {
        fields++;
        const url = urlOf(op.route);
        const bad = await api.request(op.method as "POST", url, {
          token,
          body: bodyWith(op.schema, path, LONE_SURROGATE),
        });
        expect(bad.status, `${op.method} ${op.route} ${fieldOf(path)}: ${bad.text}`).toBe(400);
        expect(bad.body, `${op.method} ${op.route}`).toMatchObject({
          error: {
            code: "invalid_argument",
            details: expect.arrayContaining([expect.objectContaining({ field: fieldOf(path) })]),
          },
        });
        for (const text of [NUL, CONTROL]) {
          const r = await api.request(op.method as "POST", url, { token, body: bodyWith(op.schema, path, text) });
          const key = `${text === NUL ? "NUL" : "control"} ${r.status}`;
          statuses[key] = (statuses[key] ?? 0) + 1;
          expect(r.status, `${op.method} ${op.route} ${fieldOf(path)}: ${r.text}`).toBeLessThan(500);
          expect(r.headers["content-type"]).toContain("application/json");
        }
      }
    }
    // The document has string fields on dozens of routes; a walker that found none would prove nothing.
    expect(fields).toBeGreaterThanOrEqual(90);
    console.log(`bad text: ${fields} string fields; answered ${JSON.stringify(statuses)}`);
  });

  it("refuses a lone surrogate in an object key, naming where it is", async () => {
    const r = await api.request("POST", `/api/prompts/${ids.prompts}/run`, {
      token,
      rawBody: `{"organizationId":"${organizationId}","variables":{"\\udc00k":1}}`,
      headers: { "content-type": "application/json" },
    });
    expect(r.status, r.text).toBe(400);
    expect(r.body).toMatchObject({ error: { code: "invalid_argument", details: [{ field: "variables.\ufffdk" }] } });
  });
});
