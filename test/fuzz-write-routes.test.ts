/**
 * Property-based fuzzing of every write route's body (issue #15), over real HTTP against the
 * embedded platform: the routes come from the live OpenAPI document (so a new route is fuzzed from
 * the day it exists), bodies are built from each route's request schema with arbitrary JSON mixed
 * in (right and wrong types, extra and missing fields, deep and odd values), and path ids point at
 * real objects of the caller's organization so that bodies reach the services. Nothing may answer
 * 5xx, and every refusal is the error envelope. FUZZ_RUNS (default 25 per route) and FUZZ_SEED tune it.
 */

import { createPublishedAgent } from "@kiln/testing/agent-fixture";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded } from "./support/embedded.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI schemas are walked loosely.
type Schema = any;

interface Route {
  method: "POST" | "PUT" | "PATCH";
  path: string;
  schema: Schema;
}

let stop: () => Promise<void>;
let api: TestClient;
let base: string;
const routes: Route[] = [];
let token: string;
/** Real ids of the caller's organization, by the name of the path's collection. */
const ids: Record<string, string> = {};

beforeAll(async () => {
  const started = await startEmbedded({ rateLimitPerMinute: 0 });
  stop = () => started.kiln.close();
  base = started.baseUrl;
  api = createTestClient(base);
  ({ accessToken: token } = await api.signUp());
  const { organization } = await api.onboard(token);
  ids.organization = organization.id;
  const { prompt, version } = await api.createPublishedPrompt(token, organization.id, {
    systemPrompt: "Hello {{name}}",
    variablesSchema: { type: "object", properties: { name: { type: "string" } } },
  });
  ids.prompts = prompt.id;
  ids.promptVersion = version.id;
  const tool = await api.createTool(token, organization.id);
  ids.tools = tool.id;
  const skill = await api.createSkill(token, organization.id);
  ids.skills = skill.id;
  ids["skill-versions"] = skill.draftVersionId ?? "";
  const agent = await createPublishedAgent(api, token, organization.id);
  ids.agents = agent.agentId;
  ids["agent-versions"] = agent.draftVersionId;
  const run = await api.post<{ id: string }>(
    `/api/agents/${agent.agentId}/run`,
    { organizationId: organization.id, inputs: { topic: "t", city: "c" } },
    { token },
  );
  ids["agent-runs"] = run.body.id;
  const promptRun = await api.post<{ id: string }>(
    `/api/prompts/${prompt.id}/run`,
    { organizationId: organization.id, variables: { name: "n" }, model: "local/echo" },
    { token },
  );
  const queue = await api.post<{ id: string }>(
    "/api/annotation-queues",
    { organizationId: organization.id, name: "q", scoreConfigs: [{ name: "ok", kind: "boolean", required: true }] },
    { token },
  );
  ids["annotation-queues"] = queue.body.id;
  const added = await api.post<{ data: { id: string }[] }>(
    `/api/annotation-queues/${queue.body.id}/items`,
    { runIds: [promptRun.body.id] },
    { token },
  );
  ids.items = added.body.data?.[0]?.id ?? "";
  expect(ids.items, `${promptRun.text} ${added.text}`).toMatch(/^ani_/);
  const key = await api.createApiKey(token, organization.id, ["prompts:read"]);
  ids["api-keys"] = key.id;

  const doc = (await api.get<Schema>("/api/openapi.json")).body;
  const resolve = (schema: Schema): Schema =>
    schema?.$ref ? doc.components.schemas[String(schema.$ref).split("/").pop() ?? ""] : schema;
  for (const [path, operations] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Schema>(operations)) {
      if (!["post", "put", "patch"].includes(method)) continue;
      const schema = resolve(op.requestBody?.content?.["application/json"]?.schema) ?? { type: "object" };
      routes.push({ method: method.toUpperCase() as Route["method"], path, schema });
    }
  }
}, 120_000);

afterAll(async () => {
  await stop?.();
});

/** `/api/skills/{id}/versions/{versionId}` with real ids where there are some, odd ones otherwise. */
function concretePath(path: string, odd: string): string {
  const segments = path.split("/");
  return segments
    .map((segment, i) => {
      if (!segment.startsWith("{")) return segment;
      const owner = segments[i - 1] ?? "";
      const real = segment === "{versionId}" ? ids.promptVersion : ids[owner];
      return encodeURIComponent(real && odd === "" ? real : odd || "nope");
    })
    .join("/");
}

const json = fc.jsonValue({ maxDepth: 4 });

/** A value for a property: of its declared kind most of the time, anything JSON otherwise. */
function valueFor(name: string, schema: Schema): fc.Arbitrary<unknown> {
  const s = schema ?? {};
  const typed: fc.Arbitrary<unknown>[] = [];
  if (name === "organizationId") typed.push(fc.constant(ids.organization));
  if (/Id$/.test(name)) typed.push(fc.constantFrom(...Object.values(ids)));
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  for (const variant of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) if (variant.type) types.push(variant.type);
  if (Array.isArray(s.enum)) typed.push(fc.constantFrom(...s.enum));
  for (const type of types) {
    if (type === "string") typed.push(fc.string({ maxLength: 40 }), fc.constant("{{name}}"), fc.constant(""));
    if (type === "integer") typed.push(fc.integer(), fc.constantFrom(0, -1, 2 ** 53));
    if (type === "number") typed.push(fc.double(), fc.integer());
    if (type === "boolean") typed.push(fc.boolean());
    if (type === "array") typed.push(fc.array(s.items ? valueFor("", s.items) : json, { maxLength: 3 }));
    if (type === "object" && s.properties) typed.push(bodyFor(s));
    if (type === "null") typed.push(fc.constant(null));
  }
  return fc.oneof({ weight: 1, arbitrary: json }, ...typed.map((arbitrary) => ({ weight: 3, arbitrary })));
}

/** A body: the schema's properties, each maybe present, with extra keys sometimes; or any JSON. */
function bodyFor(schema: Schema): fc.Arbitrary<unknown> {
  const properties: Record<string, Schema> = schema?.properties ?? {};
  const model = Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, valueFor(name, s)]));
  const required: string[] = (schema?.required ?? []).filter((name: string) => name in model);
  // Usually with the required fields, so that bodies get past the first check.
  const record = fc.oneof(
    { weight: 3, arbitrary: fc.record(model, { requiredKeys: required }) },
    { weight: 1, arbitrary: fc.record(model, { requiredKeys: [] }) },
  );
  const withExtra = fc
    .tuple(record, fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 2 }))
    .map(([known, extra]) => ({ ...extra, ...known }));
  return fc.oneof(
    { weight: 6, arbitrary: record },
    { weight: 2, arbitrary: withExtra },
    { weight: 1, arbitrary: json },
  );
}

describe("fuzzing every write route's body", () => {
  it("finds at least the routes of the specification", () => {
    expect(routes.length).toBeGreaterThanOrEqual(30);
  });

  const statuses = new Map<number, number>();
  afterAll(() => {
    // Which answers the bodies reached: refusals alone would mean the fuzz never got past validation.
    console.log(`fuzz answers by status: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  });

  it("answers no 5xx and refuses in the error envelope, on every write route", async () => {
    for (const route of routes) {
      const arbitrary = fc.record({
        body: bodyFor(route.schema),
        // Mostly real ids, sometimes a missing, foreign-looking or hostile one.
        odd: fc.oneof(
          { weight: 8, arbitrary: fc.constant("") },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              "prm_00000000000000000000000000000000",
              "x".repeat(101),
              "a b",
              "%",
              "\u0000",
              "..",
            ),
          },
        ),
      });
      await fc.assert(
        fc.asyncProperty(arbitrary, async ({ body, odd }) => {
          const path = concretePath(route.path, odd);
          const res = await api.request(route.method, path, { token, body });
          const where = `${route.method} ${path} ${JSON.stringify(body).slice(0, 300)} → ${res.status} ${res.text.slice(0, 300)}`;
          expect(res.status, where).toBeLessThan(500);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status >= 400) {
            expect(res.body, where).toMatchObject({
              error: { code: expect.any(String), message: expect.any(String), details: expect.any(Array) },
            });
          }
        }),
        { numRuns: RUNS, seed: SEED },
      );
    }
  }, 300_000);
});
