import { randomUUID } from "node:crypto";
import { createLogger } from "@kiln/kit/logger";
import { buildTestPlatform } from "@kiln/testing/platform";
import {
  createTestClient,
  type ErrorBody,
  type List,
  type Method,
  type Prompt,
  type PromptVersion,
  type Skill,
  type SkillVersion,
  type TestClient,
  type TestResponse,
  type Tool,
  type ToolVersion,
  type VersionDiff,
} from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The catalog's REST routes (api.md "Prompts", "Tools", "Version diffs", "Skills") through the
 * embedded platform: every route's happy path, refused input (which changes nothing), other
 * organizations and scopes, free-form JSON round trips and pagination.
 */

type Embedded = Awaited<ReturnType<typeof buildTestPlatform>>;

let kiln: Embedded;
let api: TestClient;

const CATALOG_SCOPES = ["prompts:read", "prompts:write", "tools:read", "tools:write", "skills:read", "skills:write"];

interface Member {
  token: string;
  organizationId: string;
  userId: string;
}

/** The owner of organization A (the one most tests act in) and an API key of A with every catalog scope. */
let owner: Member;
let ownerKey: string;
/** The owner of another organization, and a key of it with every catalog scope. */
let stranger: Member;
let strangerKey: string;

beforeAll(async () => {
  kiln = await buildTestPlatform({ logger: createLogger({ name: "test", level: "silent" }) });
  api = createTestClient(kiln.gateway.app);
  owner = await newMember();
  ownerKey = (await api.createApiKey(owner.token, owner.organizationId, CATALOG_SCOPES)).key;
  stranger = await newMember();
  strangerKey = (await api.createApiKey(stranger.token, stranger.organizationId, CATALOG_SCOPES)).key;
});

afterAll(async () => {
  await kiln?.close();
});

async function newMember(): Promise<Member> {
  const user = await api.signUp();
  const onboarding = await api.onboard(user.accessToken);
  return { token: user.accessToken, organizationId: onboarding.organization.id, userId: user.user.id };
}

const id = (prefix: string) => expect.stringMatching(new RegExp(`^${prefix}_[0-9A-Za-z]+$`));
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
const unknownId = (prefix: string) => `${prefix}_${"0".repeat(32)}`;

/** The error envelope of api.md with this status and code (and a detail on `field`). */
function expectError(res: TestResponse, status: number, code: string, field?: string): ErrorBody["error"] {
  expect(res.status, res.text).toBe(status);
  const requestId = res.headers["x-request-id"];
  expect(requestId).toBeTruthy();
  expect(res.body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Array), requestId } });
  const { error } = res.body as ErrorBody;
  for (const d of error.details) expect(d).toEqual({ field: expect.any(String), issue: expect.any(String) });
  if (field !== undefined) expect(error.details.map((d) => d.field)).toContain(field);
  expect(res.headers["x-api-stability"]).toBe("beta");
  return error;
}

/** The body of a successful answer with this status; every catalog route is public beta. */
function ok<T>(res: TestResponse<T>, status = 200): T {
  expect(res.status, res.text).toBe(status);
  expect(res.headers["x-api-stability"]).toBe("beta");
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  return res.body;
}

async function read<T>(path: string, query?: Record<string, string>, credential = owner.token): Promise<T> {
  return ok(await api.get<T>(path, { token: credential, query }));
}

/** Runs `act` and checks that what `snapshot` reads is the same afterwards. */
async function changesNothing(snapshot: () => Promise<unknown>, act: () => Promise<void>): Promise<void> {
  const before = await snapshot();
  await act();
  expect(await snapshot()).toEqual(before);
}

const CODE_OF_STATUS: Record<number, string> = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "permission_denied",
  404: "not_found",
  409: "failed_precondition",
};

/** A refused request: [what it is, the request, "<status> [<field>]"], e.g. "400 name" or "404". */
type Refusal = [string, () => Promise<TestResponse>, string];

async function expectRefusals(refusals: Refusal[]): Promise<void> {
  for (const [what, send, expected] of refusals) {
    const [status, field] = expected.split(" ");
    const res = await send();
    expect(res.status, `${what}: ${res.text}`).toBe(Number(status));
    expectError(res, Number(status), CODE_OF_STATUS[Number(status)] ?? "", field);
  }
}

const WEATHER_SCHEMA = {
  type: "object",
  properties: { city: { type: "string" }, units: { type: "string", enum: ["metric", "imperial"] } },
  required: ["city"],
};

const FORECAST_FORMAT = {
  type: "json_schema",
  name: "forecast",
  schema: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
};

/**
 * Free-form JSON with keys a careless pipeline breaks ($ref, $defs, a.b, $x, __proto__) in an
 * order that is not alphabetical. Built with JSON.parse: in an object literal "__proto__" would
 * set the prototype instead of making a key.
 */
const ODD_SCHEMA_TEXT =
  '{"type":"object","$defs":{"City":{"type":"string","minLength":1}},"properties":{"zeta":{"type":"string"},"city":{"$ref":"#/$defs/City"},"a.b":{"type":"integer"},"$x":{"type":"boolean"},"__proto__":{"type":"string"}},"required":["city"],"x-order":{"z":1,"a":2},"$comment":"kept"}';
const ODD_CONFIG_TEXT =
  '{"result":{"zeta":1,"$ref":"#/nowhere","a.b":{"c.d":2},"$x":[1,{"__proto__":{"polluted":true}}],"__proto__":{"polluted":true},"alpha":null}}';
const ODD_BINDING_TEXT = '{"zeta":"last","$ref":"#/x","a.b":1,"$x":[true],"__proto__":{"polluted":true},"alpha":{}}';
const odd = (text: string) => JSON.parse(text) as Record<string, unknown>;

/** The JSON text of a field as it came back: key order included. */
const textOf = (value: unknown) => JSON.stringify(value);

function expectNoPollution() {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty("polluted");
}

describe("prompts", () => {
  let tool: Tool;
  let otherTool: Tool;

  beforeAll(async () => {
    tool = await api.createTool(owner.token, owner.organizationId);
    otherTool = await api.createTool(owner.token, owner.organizationId);
  });

  describe("POST /api/prompts", () => {
    it("creates a prompt without versions (201)", async () => {
      const res = await api.post<Prompt>(
        "/api/prompts",
        { organizationId: owner.organizationId, name: "Weather", description: "Forecasts", defaultModel: "local/echo" },
        { token: owner.token },
      );
      const prompt = ok(res, 201);
      expect(prompt).toEqual({
        id: id("prm"),
        organizationId: owner.organizationId,
        name: "Weather",
        description: "Forecasts",
        defaultModel: "local/echo",
        publishedVersionId: null,
        latestVersion: 0,
        versions: [],
        version: null,
        createdAt: ISO,
        updatedAt: ISO,
      });
      expect(await read(`/api/prompts/${prompt.id}`)).toEqual(prompt);
    });

    it("takes optional fields as optional, defaultModel null meaning none, and an API key with prompts:write", async () => {
      const bare = ok(
        await api.post<Prompt>(
          "/api/prompts",
          { organizationId: owner.organizationId, name: "Bare" },
          { token: owner.token },
        ),
        201,
      );
      expect(bare).toMatchObject({ description: "", defaultModel: null });
      const viaKey = ok(
        await api.post<Prompt>(
          "/api/prompts",
          { organizationId: owner.organizationId, name: "By key", defaultModel: null },
          { apiKey: ownerKey },
        ),
        201,
      );
      expect(viaKey).toMatchObject({ organizationId: owner.organizationId, defaultModel: null });
    });

    it("refuses bad input with 400 on the field and creates nothing", async () => {
      const org = owner.organizationId;
      const send =
        (body: unknown, credential = owner.token) =>
        () =>
          api.post("/api/prompts", body, { token: credential });
      await changesNothing(
        () => read<List<Prompt>>("/api/prompts", { organizationId: org, limit: "200" }),
        () =>
          expectRefusals([
            ["no fields", send({}), "400 organizationId"],
            ["no name", send({ organizationId: org }), "400 name"],
            ["an unknown field", send({ organizationId: org, name: "x", color: "red" }), "400 color"],
            ["a numeric name", send({ organizationId: org, name: 42 }), "400 name"],
            ["a list description", send({ organizationId: org, name: "x", description: ["a"] }), "400 description"],
            ["a numeric defaultModel", send({ organizationId: org, name: "x", defaultModel: 5 }), "400 defaultModel"],
            ["an empty organizationId", send({ organizationId: "", name: "x" }), "400 organizationId"],
            ["a blank name", send({ organizationId: org, name: "   " }), "400 name"],
            [
              "a malformed model id",
              send({ organizationId: org, name: "x", defaultModel: "gpt4" }),
              "400 defaultModel",
            ],
            // Required on this body even for an API key (api.md "Organization scoping").
            ["a key without organizationId", send({ name: "x" }, ownerKey), "400 organizationId"],
            [
              "a body that is not JSON",
              () =>
                api.request("POST", "/api/prompts", {
                  token: owner.token,
                  rawBody: "name=x",
                  headers: { "content-type": "application/x-www-form-urlencoded" },
                }),
              "400",
            ],
            [
              "malformed JSON",
              () =>
                api.request("POST", "/api/prompts", {
                  token: owner.token,
                  rawBody: "{",
                  headers: { "content-type": "application/json" },
                }),
              "400",
            ],
            ["an unknown organization", send({ organizationId: unknownId("org"), name: "x" }), "404"],
          ]),
      );
    });
  });

  describe("prompt versions, publishing and reading", () => {
    let prompt: Prompt;
    let v1: PromptVersion;
    let v2: PromptVersion;

    beforeAll(async () => {
      prompt = await api.createPrompt(owner.token, owner.organizationId, {
        name: "Forecast",
        defaultModel: "local/echo",
      });
    });

    it("POST /api/prompts/:id/versions creates draft version 1 with the prompt's default model (201)", async () => {
      const res = await api.post<PromptVersion>(
        `/api/prompts/${prompt.id}/versions`,
        {
          systemPrompt: "You forecast the weather in {{city}}.",
          developerPrompt: "Answer in {{units}} units.",
          variablesSchema: WEATHER_SCHEMA,
          responseFormat: FORECAST_FORMAT,
          temperature: 0.2,
          maxOutputTokens: 256,
          tools: [tool.id, { toolId: otherTool.id, toolVersionId: otherTool.currentVersionId }],
          message: "First forecast: city and units.",
        },
        { token: owner.token },
      );
      v1 = ok(res, 201);
      expect(v1).toEqual({
        id: id("pv"),
        promptId: prompt.id,
        organizationId: owner.organizationId,
        version: 1,
        status: "draft",
        // A text version answers the messages a run sends, built from its two prompts.
        messages: [
          { role: "system", content: "You forecast the weather in {{city}}." },
          { role: "developer", content: "Answer in {{units}} units." },
        ],
        chat: false,
        systemPrompt: "You forecast the weather in {{city}}.",
        developerPrompt: "Answer in {{units}} units.",
        variablesSchema: WEATHER_SCHEMA,
        responseFormat: FORECAST_FORMAT,
        temperature: 0.2,
        maxOutputTokens: 256,
        cacheTtlSeconds: null,
        model: "local/echo",
        tools: [
          { toolId: tool.id, toolVersionId: tool.currentVersionId, toolKey: tool.toolKey },
          { toolId: otherTool.id, toolVersionId: otherTool.currentVersionId, toolKey: otherTool.toolKey },
        ],
        includes: [],
        createdAt: ISO,
        publishedAt: null,
        createdBy: { type: "user", id: owner.userId },
        message: "First forecast: city and units.",
      });
    });

    it("fills defaults for omitted fields and keeps a version's own model (201)", async () => {
      v2 = ok(
        await api.post<PromptVersion>(
          `/api/prompts/${prompt.id}/versions`,
          {
            systemPrompt: "Short forecast for {{city}}",
            variablesSchema: WEATHER_SCHEMA,
            model: "openai/gpt-4o-mini",
            cacheTtlSeconds: 3600,
          },
          { apiKey: ownerKey },
        ),
        201,
      );
      expect(v2).toMatchObject({
        version: 2,
        status: "draft",
        developerPrompt: null,
        responseFormat: { type: "text" },
        temperature: null,
        maxOutputTokens: null,
        cacheTtlSeconds: 3600,
        model: "openai/gpt-4o-mini",
        tools: [],
        createdBy: { type: "api_key", id: expect.stringMatching(/^key_/) },
        message: null,
      });
      const plain = ok(
        await api.post<PromptVersion>(
          `/api/prompts/${prompt.id}/versions`,
          {
            systemPrompt: "No variables",
            developerPrompt: null,
            temperature: null,
            maxOutputTokens: null,
            cacheTtlSeconds: null,
            model: null,
          },
          { token: owner.token },
        ),
        201,
      );
      expect(plain).toMatchObject({
        version: 3,
        variablesSchema: { type: "object" },
        model: "local/echo",
        cacheTtlSeconds: null,
      });
    });

    it("GET /api/prompts/:id describes the latest version while none is published, ?versionId= another", async () => {
      const latest = await read<Prompt>(`/api/prompts/${prompt.id}`);
      expect(latest).toMatchObject({ publishedVersionId: null, latestVersion: 3 });
      // Each with its author (the owner, then the owner's API key, then the owner) and change message.
      const authors = [owner.userId, expect.stringMatching(/^key_/), owner.userId];
      expect(latest.versions).toEqual(
        [1, 2, 3].map((version, i) => ({
          id: id("pv"),
          version,
          status: "draft",
          createdAt: ISO,
          publishedAt: null,
          createdBy: { type: i === 1 ? "api_key" : "user", id: authors[i] },
          message: i === 0 ? "First forecast: city and units." : null,
        })),
      );
      expect(latest.version?.version).toBe(3);
      const named = await read<Prompt>(`/api/prompts/${prompt.id}`, { versionId: v1.id });
      expect(named.version).toEqual(v1);
      expect(await read<Prompt>(`/api/prompts/${prompt.id}`, { versionId: v1.id }, ownerKey)).toEqual(named);
    });

    it("POST /api/prompts/:id/publish publishes a draft and answers the prompt (200)", async () => {
      const published = ok(
        await api.post<Prompt>(`/api/prompts/${prompt.id}/publish`, { versionId: v1.id }, { token: owner.token }),
      );
      expect(published).toMatchObject({ id: prompt.id, publishedVersionId: v1.id, latestVersion: 3 });
      expect(published.versions[0]).toEqual({
        id: v1.id,
        version: 1,
        status: "published",
        createdAt: ISO,
        publishedAt: ISO,
        createdBy: v1.createdBy,
        message: v1.message,
      });
      expect(published.version).toEqual({
        ...v1,
        status: "published",
        publishedAt: published.versions[0]?.publishedAt,
      });
      // The published version is the default one described.
      expect((await read<Prompt>(`/api/prompts/${prompt.id}`)).version?.id).toBe(v1.id);

      // A newer publication takes over; the older one stays published.
      const again = ok(
        await api.post<Prompt>(`/api/prompts/${prompt.id}/publish`, { versionId: v2.id }, { apiKey: ownerKey }),
      );
      expect(again.publishedVersionId).toBe(v2.id);
      expect(again.versions.map((v) => v.status)).toEqual(["published", "published", "draft"]);
    });

    it("refuses bad version input with 400 on the field and creates nothing", async () => {
      const send = (body: unknown) => () =>
        api.post(`/api/prompts/${prompt.id}/versions`, body, { token: owner.token });
      const foreignTool = await api.createTool(stranger.token, stranger.organizationId);
      await changesNothing(
        () => read(`/api/prompts/${prompt.id}`),
        () =>
          expectRefusals([
            ["no systemPrompt", send({}), "400 systemPrompt"],
            ["an unknown field", send({ systemPrompt: "x", layers: [] }), "400 layers"],
            ["a string temperature", send({ systemPrompt: "x", temperature: "hot" }), "400 temperature"],
            ["fractional maxOutputTokens", send({ systemPrompt: "x", maxOutputTokens: 1.5 }), "400 maxOutputTokens"],
            ["a string variablesSchema", send({ systemPrompt: "x", variablesSchema: "object" }), "400 variablesSchema"],
            ["an array responseFormat", send({ systemPrompt: "x", responseFormat: [] }), "400 responseFormat"],
            ["tools not a list", send({ systemPrompt: "x", tools: tool.id }), "400 tools"],
            ["a numeric tool", send({ systemPrompt: "x", tools: [42] }), "400 tools[0]"],
            [
              "a tool without toolId",
              send({ systemPrompt: "x", tools: [{ toolVersionId: "tv_1" }] }),
              "400 tools[0].toolId",
            ],
            [
              "a tool with an unknown field",
              send({ systemPrompt: "x", tools: [{ toolId: tool.id, pin: 1 }] }),
              "400 tools[0].pin",
            ],
            ["an undeclared placeholder", send({ systemPrompt: "Hi {{name}}" }), "400 systemPrompt"],
            [
              "an undeclared placeholder in the developer prompt",
              send({ systemPrompt: "{{city}}", developerPrompt: "{{nope}}", variablesSchema: WEATHER_SCHEMA }),
              "400 developerPrompt",
            ],
            [
              "a variables schema that is not an object schema",
              send({ systemPrompt: "x", variablesSchema: { type: "string" } }),
              "400 variablesSchema.type",
            ],
            [
              "an invalid JSON Schema",
              send({ systemPrompt: "x", variablesSchema: { type: "object", properties: { a: { type: "nope" } } } }),
              "400",
            ],
            [
              "an unknown response format",
              send({ systemPrompt: "x", responseFormat: { type: "xml" } }),
              "400 responseFormat.type",
            ],
            ["temperature over 2", send({ systemPrompt: "x", temperature: 2.5 }), "400 temperature"],
            ["maxOutputTokens 0", send({ systemPrompt: "x", maxOutputTokens: 0 }), "400 maxOutputTokens"],
            ["cacheTtlSeconds 0", send({ systemPrompt: "x", cacheTtlSeconds: 0 }), "400 cacheTtlSeconds"],
            ["cacheTtlSeconds 604801", send({ systemPrompt: "x", cacheTtlSeconds: 604_801 }), "400 cacheTtlSeconds"],
            ["fractional cacheTtlSeconds", send({ systemPrompt: "x", cacheTtlSeconds: 1.5 }), "400 cacheTtlSeconds"],
            ["a string cacheTtlSeconds", send({ systemPrompt: "x", cacheTtlSeconds: "x" }), "400 cacheTtlSeconds"],
            ["a malformed model", send({ systemPrompt: "x", model: "gpt4" }), "400 model"],
            ["an unknown tool", send({ systemPrompt: "x", tools: [unknownId("tool")] }), "404"],
            ["another organization's tool", send({ systemPrompt: "x", tools: [foreignTool.id] }), "404"],
            [
              "a version of another tool",
              send({ systemPrompt: "x", tools: [{ toolId: tool.id, toolVersionId: otherTool.currentVersionId }] }),
              "404",
            ],
            [
              "an unknown prompt",
              () =>
                api.post(`/api/prompts/${unknownId("prm")}/versions`, { systemPrompt: "x" }, { token: owner.token }),
              "404",
            ],
          ]),
      );
    });

    it("refuses bad publications and changes nothing", async () => {
      const other = await api.createPrompt(owner.token, owner.organizationId);
      const otherVersion = await api.createPromptVersion(owner.token, other.id, { systemPrompt: "x" });
      const send = (body: unknown) => () => api.post(`/api/prompts/${prompt.id}/publish`, body, { token: owner.token });
      await changesNothing(
        async () => [await read(`/api/prompts/${prompt.id}`), await read(`/api/prompts/${other.id}`)],
        () =>
          expectRefusals([
            ["no versionId", send({}), "400 versionId"],
            ["a numeric versionId", send({ versionId: 1 }), "400 versionId"],
            ["an unknown field", send({ versionId: v1.id, force: true }), "400 force"],
            ["an unknown version", send({ versionId: unknownId("pv") }), "404"],
            ["another prompt's version", send({ versionId: otherVersion.id }), "404"],
            ["a published version", send({ versionId: v1.id }), "409 versionId"],
            [
              "an unknown prompt",
              () => api.post(`/api/prompts/${unknownId("prm")}/publish`, { versionId: v1.id }, { token: owner.token }),
              "404",
            ],
          ]),
      );
    });

    it("refuses bad reads", async () => {
      await expectRefusals([
        ["an unknown prompt", () => api.get(`/api/prompts/${unknownId("prm")}`, { token: owner.token }), "404"],
        [
          "an unknown version",
          () => api.get(`/api/prompts/${prompt.id}`, { token: owner.token, query: { versionId: unknownId("pv") } }),
          "404",
        ],
        [
          "an unknown query parameter",
          () => api.get(`/api/prompts/${prompt.id}`, { token: owner.token, query: { expand: "all" } }),
          "400 expand",
        ],
      ]);
    });
  });

  describe("PATCH /api/prompts/:id", () => {
    it("changes name, description and default model; null clears the model; versions keep theirs (200)", async () => {
      const prompt = await api.createPrompt(owner.token, owner.organizationId, { defaultModel: "local/echo" });
      const version = await api.createPromptVersion(owner.token, prompt.id, { systemPrompt: "x" });
      const renamed = ok(
        await api.patch<Prompt>(
          `/api/prompts/${prompt.id}`,
          { name: "Renamed", description: "New words", defaultModel: "openai/gpt-4o-mini" },
          { token: owner.token },
        ),
      );
      expect(renamed).toMatchObject({
        id: prompt.id,
        name: "Renamed",
        description: "New words",
        defaultModel: "openai/gpt-4o-mini",
        createdAt: prompt.createdAt,
      });
      expect(Date.parse(renamed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(prompt.updatedAt));
      expect(renamed.version).toEqual(version);

      const cleared = ok(
        await api.patch<Prompt>(`/api/prompts/${prompt.id}`, { defaultModel: null }, { apiKey: ownerKey }),
      );
      expect(cleared).toMatchObject({ name: "Renamed", defaultModel: null });
      expect(ok(await api.patch<Prompt>(`/api/prompts/${prompt.id}`, {}, { token: owner.token }))).toEqual(cleared);
      expect((await read<Prompt>(`/api/prompts/${prompt.id}`)).version?.model).toBe("local/echo");
    });

    it("refuses bad input with 400 on the field and changes nothing", async () => {
      const prompt = await api.createPrompt(owner.token, owner.organizationId, { defaultModel: "local/echo" });
      const send = (body: unknown) => () => api.patch(`/api/prompts/${prompt.id}`, body, { token: owner.token });
      await changesNothing(
        () => read(`/api/prompts/${prompt.id}`),
        () =>
          expectRefusals([
            ["a numeric name", send({ name: 1 }), "400 name"],
            ["an unknown field", send({ organizationId: stranger.organizationId }), "400 organizationId"],
            ["a numeric defaultModel", send({ defaultModel: 3 }), "400 defaultModel"],
            ["a blank name", send({ name: " " }), "400 name"],
            ["a malformed model", send({ name: "ok", defaultModel: "nope" }), "400 defaultModel"],
            [
              "an unknown prompt",
              () => api.patch(`/api/prompts/${unknownId("prm")}`, { name: "x" }, { token: owner.token }),
              "404",
            ],
          ]),
      );
    });
  });

  it("round-trips free-form JSON (variablesSchema, responseFormat) key for key, in order", async () => {
    const prompt = await api.createPrompt(owner.token, owner.organizationId);
    const responseFormatText = `{"type":"json_schema","name":"odd","schema":${ODD_SCHEMA_TEXT}}`;
    const res = await api.post<PromptVersion>(
      `/api/prompts/${prompt.id}/versions`,
      {
        systemPrompt: "Weather in {{city}}",
        variablesSchema: odd(ODD_SCHEMA_TEXT),
        responseFormat: odd(responseFormatText),
      },
      { token: owner.token },
    );
    const version = ok(res, 201);
    expect(textOf(version.variablesSchema)).toBe(ODD_SCHEMA_TEXT);
    expect(textOf(version.responseFormat)).toBe(responseFormatText);
    expect(res.text).toContain(`"variablesSchema":${ODD_SCHEMA_TEXT}`);
    const again = await api.get<Prompt>(`/api/prompts/${prompt.id}`, { token: owner.token });
    expect(again.text).toContain(`"variablesSchema":${ODD_SCHEMA_TEXT}`);
    expect(again.text).toContain(`"responseFormat":${responseFormatText}`);
    const list = await api.get(`/api/prompts`, { token: owner.token, query: { organizationId: owner.organizationId } });
    expect(list.text).toContain(`"variablesSchema":${ODD_SCHEMA_TEXT}`);
    expectNoPollution();
  });
});

describe("tools", () => {
  const weatherConfig = { result: { temperature: 21, sky: "clear" } };
  const cityInput = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

  describe("POST /api/tools", () => {
    it("creates a tool with its version 1 (201)", async () => {
      const body = {
        organizationId: owner.organizationId,
        toolKey: `weather_${randomUUID().slice(0, 8)}`,
        name: "Weather",
        type: "manual_stub",
        config: weatherConfig,
        inputSchema: cityInput,
        description: "A fixed forecast",
      };
      const tool = ok(await api.post<Tool>("/api/tools", body, { token: owner.token }), 201);
      expect(tool).toEqual({
        id: id("tool"),
        organizationId: owner.organizationId,
        toolKey: body.toolKey,
        name: "Weather",
        description: "A fixed forecast",
        type: "manual_stub",
        currentVersionId: id("tv"),
        latestVersion: 1,
        config: weatherConfig,
        inputSchema: cityInput,
        createdAt: ISO,
        updatedAt: ISO,
      });
      expect(await read(`/api/tools/${tool.id}`)).toEqual(tool);
      // The same key in another organization is another tool; in this one, a clash (409).
      const elsewhere = await api.createTool(strangerKey, stranger.organizationId, { toolKey: body.toolKey });
      expect(elsewhere.toolKey).toBe(body.toolKey);
      const clash = await api.post("/api/tools", { ...body, name: "Again" }, { apiKey: ownerKey });
      expectError(clash, 409, "already_exists", "toolKey");
    });

    it("refuses bad input with 400 on the field and creates nothing", async () => {
      const org = owner.organizationId;
      const valid = {
        organizationId: org,
        toolKey: `t_${randomUUID().slice(0, 8)}`,
        name: "T",
        type: "manual_stub",
        config: { result: {} },
        inputSchema: { type: "object" },
      };
      const send =
        (body: unknown, credential = owner.token) =>
        () =>
          api.post("/api/tools", body, { token: credential });
      const without = (field: keyof typeof valid) =>
        Object.fromEntries(Object.entries(valid).filter(([k]) => k !== field));
      await changesNothing(
        () => read<List<Tool>>("/api/tools", { organizationId: org, limit: "200" }),
        () =>
          expectRefusals([
            ...(["organizationId", "toolKey", "name", "type", "config", "inputSchema"] as const).map(
              (field): Refusal => [`no ${field}`, send(without(field)), `400 ${field}`],
            ),
            ["an unknown field", send({ ...valid, version: 2 }), "400 version"],
            ["an unknown type", send({ ...valid, type: "ftp" }), "400 type"],
            ["a toolKey with spaces", send({ ...valid, toolKey: "has space" }), "400 toolKey"],
            ["a string config", send({ ...valid, config: "x" }), "400 config"],
            ["an array inputSchema", send({ ...valid, inputSchema: [] }), "400 inputSchema"],
            ["a stub without an object result", send({ ...valid, config: { result: 1 } }), "400 config.result"],
            ["an unknown stub setting", send({ ...valid, config: { result: {}, delay: 1 } }), "400 config.delay"],
            [
              "an input schema not of type object",
              send({ ...valid, inputSchema: { type: "string" } }),
              "400 inputSchema.type",
            ],
            [
              "an http tool to a host off the allowlist",
              send({ ...valid, type: "http", config: { url: "https://api.example.com/w", method: "GET" } }),
              "400 config.url",
            ],
            ["a key without organizationId", send(without("organizationId"), ownerKey), "400 organizationId"],
            ["an unknown organization", send({ ...valid, organizationId: unknownId("org") }), "404"],
          ]),
      );
    });
  });

  describe("tool versions and diffs", () => {
    let tool: Tool;
    let v2: ToolVersion;

    beforeAll(async () => {
      tool = await api.createTool(owner.token, owner.organizationId, { config: weatherConfig, inputSchema: cityInput });
    });

    it("POST /api/tools/:id/versions creates a full snapshot that becomes current (201)", async () => {
      const res = await api.post<ToolVersion>(
        `/api/tools/${tool.id}/versions`,
        { config: { result: { temperature: 22, sky: "clear" } } },
        { token: owner.token },
      );
      v2 = ok(res, 201);
      expect(v2).toEqual({
        id: id("tv"),
        toolId: tool.id,
        version: 2,
        type: "manual_stub",
        config: { result: { temperature: 22, sky: "clear" } },
        inputSchema: cityInput,
        createdAt: ISO,
        createdBy: { type: "user", id: owner.userId },
        message: null,
      });
      const now = await read<Tool>(`/api/tools/${tool.id}`);
      expect(now).toMatchObject({ currentVersionId: v2.id, latestVersion: 2, config: v2.config, name: tool.name });
      const v3 = ok(
        await api.post<ToolVersion>(
          `/api/tools/${tool.id}/versions`,
          {
            type: "manual_stub",
            inputSchema: { type: "object", properties: { city: { type: "string" }, day: { type: "string" } } },
          },
          { apiKey: ownerKey },
        ),
        201,
      );
      expect(v3).toMatchObject({ version: 3, config: v2.config });
    });

    it("GET /api/tools/:id/versions/:versionId/diff compares with the version before by default (200)", async () => {
      const diff = await read<VersionDiff>(`/api/tools/${tool.id}/versions/${v2.id}/diff`);
      expect(diff).toEqual({
        from: { versionId: tool.currentVersionId, version: 1 },
        to: { versionId: v2.id, version: 2 },
        changes: [{ op: "replace", path: "/config/result/temperature", before: 21, after: 22 }],
        summary: expect.any(String),
      });
      expect(diff.summary).not.toBe("");
    });

    it("diffs against ?against= and version 1 against nothing", async () => {
      const backwards = await read<VersionDiff>(`/api/tools/${tool.id}/versions/${tool.currentVersionId}/diff`, {
        against: v2.id,
      });
      expect(backwards).toMatchObject({
        from: { versionId: v2.id, version: 2 },
        to: { versionId: tool.currentVersionId, version: 1 },
        changes: [{ op: "replace", path: "/config/result/temperature", before: 22, after: 21 }],
      });
      const first = await read<VersionDiff>(
        `/api/tools/${tool.id}/versions/${tool.currentVersionId}/diff`,
        undefined,
        ownerKey,
      );
      expect(first.from).toBeNull();
      expect(first.to).toEqual({ versionId: tool.currentVersionId, version: 1 });
      expect(first.changes.length).toBeGreaterThan(0);
      for (const change of first.changes) {
        expect(change.op).toBe("add");
        expect(change).not.toHaveProperty("before");
        expect(change).toHaveProperty("after");
      }
      expect(first.changes.map((c) => c.path)).toEqual(expect.arrayContaining(["/config"]));
    });

    it("refuses bad diffs", async () => {
      const other = await api.createTool(owner.token, owner.organizationId);
      const diff = (versionId: string, query?: Record<string, string>) => () =>
        api.get(`/api/tools/${tool.id}/versions/${versionId}/diff`, { token: owner.token, query });
      await expectRefusals([
        ["an unknown version", diff(unknownId("tv")), "404"],
        ["another tool's version", diff(other.currentVersionId), "404"],
        ["an unknown against", diff(v2.id, { against: unknownId("tv") }), "404"],
        ["an against of another tool", diff(v2.id, { against: other.currentVersionId }), "404"],
        ["an unknown query parameter", diff(v2.id, { since: "1" }), "400 since"],
        [
          "an unknown tool",
          () => api.get(`/api/tools/${unknownId("tool")}/versions/${v2.id}/diff`, { token: owner.token }),
          "404",
        ],
      ]);
    });

    it("refuses bad version input with 400 on the field and creates nothing", async () => {
      const send = (body: unknown) => () => api.post(`/api/tools/${tool.id}/versions`, body, { token: owner.token });
      await changesNothing(
        () => read(`/api/tools/${tool.id}`),
        () =>
          expectRefusals([
            ["an unknown field", send({ name: "x" }), "400 name"],
            ["an unknown type", send({ type: "ftp" }), "400 type"],
            ["an array config", send({ config: [] }), "400 config"],
            ["a numeric inputSchema", send({ inputSchema: 1 }), "400 inputSchema"],
            ["a stub result that is not an object", send({ config: { result: "sunny" } }), "400 config.result"],
            ["http with the stub's config", send({ type: "http" }), "400"],
            ["an invalid input schema", send({ inputSchema: { type: "object", required: "city" } }), "400"],
            [
              "an unknown tool",
              () => api.post(`/api/tools/${unknownId("tool")}/versions`, {}, { token: owner.token }),
              "404",
            ],
          ]),
      );
    });
  });

  describe("PATCH /api/tools/:id", () => {
    it("changes name and description only (200)", async () => {
      const tool = await api.createTool(owner.token, owner.organizationId);
      const patched = ok(
        await api.patch<Tool>(
          `/api/tools/${tool.id}`,
          { name: "Renamed", description: "Now described" },
          { token: owner.token },
        ),
      );
      expect(patched).toEqual({ ...tool, name: "Renamed", description: "Now described", updatedAt: ISO });
      expect(ok(await api.patch<Tool>(`/api/tools/${tool.id}`, {}, { apiKey: ownerKey }))).toEqual(patched);
      expect(await read(`/api/tools/${tool.id}`)).toEqual(patched);
    });

    it("refuses bad input with 400 on the field and changes nothing", async () => {
      const tool = await api.createTool(owner.token, owner.organizationId);
      const send = (body: unknown) => () => api.patch(`/api/tools/${tool.id}`, body, { token: owner.token });
      await changesNothing(
        () => read(`/api/tools/${tool.id}`),
        () =>
          expectRefusals([
            ["toolKey (not editable)", send({ toolKey: "other" }), "400 toolKey"],
            ["config (versions hold it)", send({ config: { result: {} } }), "400 config"],
            ["a numeric name", send({ name: 5 }), "400 name"],
            ["a blank name", send({ name: "" }), "400 name"],
            [
              "an unknown tool",
              () => api.patch(`/api/tools/${unknownId("tool")}`, { name: "x" }, { token: owner.token }),
              "404",
            ],
          ]),
      );
    });
  });

  it("GET /api/tools/:id refuses an unknown tool (404) and query parameters (400)", async () => {
    const tool = await api.createTool(owner.token, owner.organizationId);
    await expectRefusals([
      ["an unknown tool", () => api.get(`/api/tools/${unknownId("tool")}`, { token: owner.token }), "404"],
      [
        "a query parameter",
        () => api.get(`/api/tools/${tool.id}`, { token: owner.token, query: { versionId: tool.currentVersionId } }),
        "400 versionId",
      ],
    ]);
  });

  it("round-trips free-form JSON (config, inputSchema, diff values) key for key, in order", async () => {
    const res = await api.post<Tool>(
      "/api/tools",
      {
        organizationId: owner.organizationId,
        toolKey: `odd_${randomUUID().slice(0, 8)}`,
        name: "Odd",
        type: "manual_stub",
        config: odd(ODD_CONFIG_TEXT),
        inputSchema: odd(ODD_SCHEMA_TEXT),
      },
      { token: owner.token },
    );
    const tool = ok(res, 201);
    expect(textOf(tool.config)).toBe(ODD_CONFIG_TEXT);
    expect(textOf(tool.inputSchema)).toBe(ODD_SCHEMA_TEXT);
    expect(res.text).toContain(`"config":${ODD_CONFIG_TEXT}`);
    const fetched = await api.get<Tool>(`/api/tools/${tool.id}`, { token: owner.token });
    expect(fetched.text).toContain(`"config":${ODD_CONFIG_TEXT},"inputSchema":${ODD_SCHEMA_TEXT}`);

    const nextConfigText = ODD_CONFIG_TEXT.replace('"zeta":1', '"zeta":2');
    const version = ok(
      await api.post<ToolVersion>(
        `/api/tools/${tool.id}/versions`,
        { config: odd(nextConfigText) },
        { token: owner.token },
      ),
      201,
    );
    expect(textOf(version.config)).toBe(nextConfigText);
    expect(textOf(version.inputSchema)).toBe(ODD_SCHEMA_TEXT);
    const diff = await read<VersionDiff>(`/api/tools/${tool.id}/versions/${version.id}/diff`);
    expect(diff.changes).toEqual([{ op: "replace", path: "/config/result/zeta", before: 1, after: 2 }]);
    // Version 1 against nothing: the whole config is one added value, still in order.
    const first = await api.get<VersionDiff>(`/api/tools/${tool.id}/versions/${tool.currentVersionId}/diff`, {
      token: owner.token,
    });
    expect(textOf(ok(first).changes.find((c) => c.path === "/config")?.after)).toBe(ODD_CONFIG_TEXT);
    expectNoPollution();
  });
});

describe("skills", () => {
  let city: { prompt: Prompt; version: PromptVersion };
  let summary: { prompt: Prompt; version: PromptVersion };
  let tool: Tool;

  beforeAll(async () => {
    city = await api.createPublishedPrompt(
      owner.token,
      owner.organizationId,
      {
        systemPrompt: "Forecast for {{city}} in {{units}}.",
        variablesSchema: WEATHER_SCHEMA,
        responseFormat: FORECAST_FORMAT,
      },
      { name: "City forecast" },
    );
    summary = await api.createPublishedPrompt(
      owner.token,
      owner.organizationId,
      {
        systemPrompt: "Summarize {{forecast}} in a {{tone}} tone for {{audience}}.",
        variablesSchema: {
          type: "object",
          properties: { forecast: { type: "string" }, tone: {}, audience: { type: "string" } },
          required: ["forecast", "audience"],
        },
      },
      { name: "Summary" },
    );
    tool = await api.createTool(owner.token, owner.organizationId);
  });

  const steps = () => [
    { promptId: city.prompt.id },
    {
      promptId: summary.prompt.id,
      promptVersionId: summary.version.id,
      alias: "summary",
      variables: { forecast: "{{steps.step1.output.summary}}", tone: "friendly" },
    },
  ];

  describe("POST /api/skills", () => {
    it("creates a skill with an empty draft version 1 (201)", async () => {
      const res = await api.post<Skill>(
        "/api/skills",
        { organizationId: owner.organizationId, name: "Weather brief", description: "Two steps" },
        { token: owner.token },
      );
      const skill = ok(res, 201);
      expect(skill).toEqual({
        id: id("skl"),
        organizationId: owner.organizationId,
        name: "Weather brief",
        description: "Two steps",
        draftVersionId: id("sv"),
        publishedVersionId: null,
        versions: [
          {
            id: skill.draftVersionId,
            version: 1,
            status: "draft",
            createdAt: ISO,
            publishedAt: null,
            createdBy: { type: "user", id: owner.userId },
            message: null,
          },
        ],
        describedVersionId: skill.draftVersionId,
        promptComposition: [],
        tools: [],
        inputSchema: { type: "object", properties: {} },
        outputSchema: { type: "string" },
        createdAt: ISO,
        updatedAt: ISO,
      });
      expect(await read(`/api/skills/${skill.id}`)).toEqual(skill);
    });

    it("lets an API key omit organizationId (its own organization)", async () => {
      const skill = ok(await api.post<Skill>("/api/skills", { name: "By key" }, { apiKey: ownerKey }), 201);
      expect(skill.organizationId).toBe(owner.organizationId);
    });

    it("refuses bad input with 400 on the field and creates nothing", async () => {
      const org = owner.organizationId;
      const send =
        (body: unknown, credential = owner.token) =>
        () =>
          api.post("/api/skills", body, { token: credential });
      await changesNothing(
        () => read<List<Skill>>("/api/skills", { organizationId: org, limit: "200" }),
        () =>
          expectRefusals([
            ["a user without organizationId", send({ name: "x" }), "400 organizationId"],
            ["no name", send({ organizationId: org }), "400 name"],
            ["no name from a key", send({}, ownerKey), "400 name"],
            ["a numeric name", send({ organizationId: org, name: 5 }), "400 name"],
            ["an unknown field", send({ organizationId: org, name: "x", prompts: [] }), "400 prompts"],
            ["a blank name", send({ organizationId: org, name: "" }), "400 name"],
            ["an unknown organization", send({ organizationId: unknownId("org"), name: "x" }), "404"],
          ]),
      );
    });
  });

  describe("composition, versions, publishing and diffs", () => {
    let skill: Skill;
    let v1: string;

    beforeAll(async () => {
      skill = await api.createSkill(owner.token, owner.organizationId, { name: "Brief" });
      v1 = skill.draftVersionId ?? "";
    });

    it("POST /api/skill-versions/:id/prompts (replacePrompts) sets the composition and answers the skill (200)", async () => {
      const res = await api.post<Skill>(
        `/api/skill-versions/${v1}/prompts`,
        { prompts: steps() },
        { token: owner.token },
      );
      const composed = ok(res);
      expect(composed).toMatchObject({
        id: skill.id,
        draftVersionId: v1,
        describedVersionId: v1,
        publishedVersionId: null,
      });
      expect(composed.promptComposition).toEqual([
        {
          order: 1,
          alias: "step1",
          promptId: city.prompt.id,
          promptVersionId: city.version.id,
          promptName: "City forecast",
          version: 1,
          variables: {},
        },
        {
          order: 2,
          alias: "summary",
          promptId: summary.prompt.id,
          promptVersionId: summary.version.id,
          promptName: "Summary",
          version: 1,
          variables: { forecast: "{{steps.step1.output.summary}}", tone: "friendly" },
        },
      ]);
      // Input: what the steps read from the skill input; output: the last step's format (text).
      expect(composed.inputSchema).toEqual({
        type: "object",
        properties: {
          city: { type: "string" },
          units: { type: "string", enum: ["metric", "imperial"] },
          audience: { type: "string" },
        },
        required: ["city", "audience"],
      });
      expect(composed.outputSchema).toEqual({ type: "string" });
      expect(await read(`/api/skills/${skill.id}`)).toEqual(composed);
    });

    it("POST /api/skill-versions/:id/tools replaces the tool set (200)", async () => {
      const second = await api.createTool(owner.token, owner.organizationId);
      const res = await api.post<Skill>(
        `/api/skill-versions/${v1}/tools`,
        { tools: [tool.id, { toolId: second.id, toolVersionId: second.currentVersionId }] },
        { apiKey: ownerKey },
      );
      expect(ok(res).tools).toEqual([
        { toolId: tool.id, toolVersionId: tool.currentVersionId, toolKey: tool.toolKey },
        { toolId: second.id, toolVersionId: second.currentVersionId, toolKey: second.toolKey },
      ]);
      const replaced = ok(
        await api.post<Skill>(`/api/skill-versions/${v1}/tools`, { tools: [tool.id] }, { token: owner.token }),
      );
      expect(replaced.tools.map((t) => t.toolId)).toEqual([tool.id]);
    });

    it("POST /api/skills/:id/publish publishes the draft and answers the skill (200)", async () => {
      const published = ok(await api.post<Skill>(`/api/skills/${skill.id}/publish`, {}, { token: owner.token }));
      expect(published).toMatchObject({
        publishedVersionId: v1,
        draftVersionId: null,
        describedVersionId: v1,
        versions: [{ id: v1, version: 1, status: "published", createdAt: ISO, publishedAt: ISO }],
      });
      expect(published.promptComposition).toHaveLength(2);
    });

    it("POST /api/skills/:id/versions creates a draft copy (201); a second draft is 409 naming the first", async () => {
      const res = await api.post<SkillVersion>(`/api/skills/${skill.id}/versions`, {}, { token: owner.token });
      const v2 = ok(res, 201);
      const before = await read<Skill>(`/api/skills/${skill.id}`, { versionId: v1 });
      expect(v2).toEqual({
        id: id("sv"),
        skillId: skill.id,
        version: 2,
        status: "draft",
        promptComposition: before.promptComposition,
        tools: before.tools,
        inputSchema: before.inputSchema,
        outputSchema: before.outputSchema,
        createdAt: ISO,
        publishedAt: null,
        createdBy: { type: "user", id: owner.userId },
        message: null,
      });
      const second = await api.post(`/api/skills/${skill.id}/versions`, { fromVersionId: v1 }, { apiKey: ownerKey });
      const error = expectError(second, 409, "failed_precondition");
      expect(JSON.stringify(error.details)).toContain(v2.id);

      const now = await read<Skill>(`/api/skills/${skill.id}`);
      expect(now).toMatchObject({ draftVersionId: v2.id, publishedVersionId: v1, describedVersionId: v2.id });
      expect((await read<Skill>(`/api/skills/${skill.id}`, { versionId: v1 })).describedVersionId).toBe(v1);

      // The copy diffs empty against its source; a change shows as a JSON Pointer change.
      const same = await read<VersionDiff>(`/api/skills/${skill.id}/versions/${v2.id}/diff`);
      expect(same).toEqual({
        from: { versionId: v1, version: 1 },
        to: { versionId: v2.id, version: 2 },
        changes: [],
        summary: expect.any(String),
      });
      const [first, last] = steps();
      await api.replaceSkillPrompts(owner.token, v2.id, [
        { ...first!, alias: "forecast" },
        {
          ...last!,
          variables: { forecast: "{{steps.forecast.output.summary}}", tone: "calm" },
        },
      ]);
      const changed = await read<VersionDiff>(
        `/api/skills/${skill.id}/versions/${v2.id}/diff`,
        { against: v1 },
        ownerKey,
      );
      expect(changed.changes).toEqual(
        expect.arrayContaining([
          { op: "replace", path: "/promptComposition/0/alias", before: "step1", after: "forecast" },
          { op: "replace", path: "/promptComposition/1/variables/tone", before: "friendly", after: "calm" },
        ]),
      );
      const fromNothing = await read<VersionDiff>(`/api/skills/${skill.id}/versions/${v1}/diff`);
      expect(fromNothing.from).toBeNull();
      expect(fromNothing.changes.every((c) => c.op === "add")).toBe(true);

      // Publishing the named draft.
      const published = ok(
        await api.post<Skill>(`/api/skills/${skill.id}/publish`, { versionId: v2.id }, { apiKey: ownerKey }),
      );
      expect(published).toMatchObject({ publishedVersionId: v2.id, draftVersionId: null });
      expect(published.versions.map((v) => v.status)).toEqual(["published", "published"]);
    });

    it("refuses bad composition input and changes nothing", async () => {
      const draft = await api.createSkill(owner.token, owner.organizationId);
      const dv = draft.draftVersionId ?? "";
      await api.replaceSkillPrompts(owner.token, dv, steps());
      const unpublished = await api.createPrompt(owner.token, owner.organizationId);
      const unpublishedVersion = await api.createPromptVersion(owner.token, unpublished.id, { systemPrompt: "x" });
      const foreign = await api.createPublishedPrompt(stranger.token, stranger.organizationId, { systemPrompt: "x" });
      const send =
        (body: unknown, versionId = dv) =>
        () =>
          api.post(`/api/skill-versions/${versionId}/prompts`, body, { token: owner.token });
      const publishedVersion = (await read<Skill>(`/api/skills/${draft.id}`)).describedVersionId;
      await changesNothing(
        () => read(`/api/skills/${draft.id}`),
        () =>
          expectRefusals([
            ["no prompts", send({}), "400 prompts"],
            ["prompts not a list", send({ prompts: city.prompt.id }), "400 prompts"],
            ["a step without promptId", send({ prompts: [{}] }), "400 prompts[0].promptId"],
            [
              "a step with an unknown field",
              send({ prompts: [{ promptId: city.prompt.id, layer: 1 }] }),
              "400 prompts[0].layer",
            ],
            [
              "string variables",
              send({ prompts: [{ promptId: city.prompt.id, variables: "x" }] }),
              "400 prompts[0].variables",
            ],
            ["an unknown field", send({ prompts: [], replace: true }), "400 replace"],
            ["an unknown prompt", send({ prompts: [{ promptId: unknownId("prm") }] }), "404 prompts[0].promptId"],
            ["another organization's prompt", send({ prompts: [{ promptId: foreign.prompt.id }] }), "404"],
            [
              "an unpublished version",
              send({ prompts: [{ promptId: unpublished.id, promptVersionId: unpublishedVersion.id }] }),
              "409 prompts[0].promptVersionId",
            ],
            ["a prompt with nothing published", send({ prompts: [{ promptId: unpublished.id }] }), "409"],
            [
              "an undeclared variable",
              send({ prompts: [{ promptId: city.prompt.id, variables: { country: "FR" } }] }),
              "400 prompts[0].variables.country",
            ],
            [
              "a binding to a later step",
              send({
                prompts: [
                  { promptId: summary.prompt.id, variables: { forecast: "{{steps.later.output}}" } },
                  { promptId: city.prompt.id, alias: "later" },
                ],
              }),
              "400 prompts[0].variables.forecast",
            ],
            [
              "a duplicate alias",
              send({
                prompts: [
                  { promptId: city.prompt.id, alias: "a" },
                  { promptId: city.prompt.id, alias: "a" },
                ],
              }),
              "400 prompts[1].alias",
            ],
            ["an unknown skill version", send({ prompts: [] }, unknownId("sv")), "404"],
          ]),
      );
      await api.publishSkill(owner.token, draft.id);
      await changesNothing(
        () => read(`/api/skills/${draft.id}`),
        () =>
          expectRefusals([
            ["a published version", send({ prompts: steps() }, publishedVersion), "409"],
            [
              "tools of a published version",
              () => api.post(`/api/skill-versions/${publishedVersion}/tools`, { tools: [] }, { token: owner.token }),
              "409",
            ],
          ]),
      );
    });

    it("refuses bad tool sets and changes nothing", async () => {
      const draft = await api.createSkill(owner.token, owner.organizationId);
      const dv = draft.draftVersionId ?? "";
      const foreignTool = await api.createTool(stranger.token, stranger.organizationId);
      const send = (body: unknown) => () => api.post(`/api/skill-versions/${dv}/tools`, body, { token: owner.token });
      await changesNothing(
        () => read(`/api/skills/${draft.id}`),
        () =>
          expectRefusals([
            ["no tools", send({}), "400 tools"],
            ["a numeric tool", send({ tools: [1] }), "400 tools[0]"],
            ["a tool object without toolId", send({ tools: [{}] }), "400 tools[0].toolId"],
            ["an unknown field", send({ tools: [], mode: "append" }), "400 mode"],
            ["an unknown tool", send({ tools: [unknownId("tool")] }), "404"],
            ["another organization's tool", send({ tools: [foreignTool.id] }), "404"],
            ["the same toolKey twice", send({ tools: [tool.id, tool.id] }), "400 tools[1]"],
          ]),
      );
    });

    it("refuses bad versions, publications, reads and diffs and changes nothing", async () => {
      const empty = await api.createSkill(owner.token, owner.organizationId);
      const other = await api.createSkill(owner.token, owner.organizationId);
      const path = `/api/skills/${empty.id}`;
      const post = (suffix: string, body: unknown) => () => api.post(`${path}${suffix}`, body, { token: owner.token });
      const get = (suffix: string, query?: Record<string, string>) => () =>
        api.get(`${path}${suffix}`, { token: owner.token, query });
      await changesNothing(
        () => read(path),
        () =>
          expectRefusals([
            ["an empty composition", post("/publish", {}), "409 promptComposition"],
            ["a numeric versionId", post("/publish", { versionId: 1 }), "400 versionId"],
            ["an unknown version to publish", post("/publish", { versionId: unknownId("sv") }), "404"],
            ["another skill's version to publish", post("/publish", { versionId: other.draftVersionId }), "404"],
            ["an unknown publish field", post("/publish", { force: true }), "400 force"],
            ["a second draft", post("/versions", {}), "409"],
            ["a numeric fromVersionId", post("/versions", { fromVersionId: 2 }), "400 fromVersionId"],
            ["an unknown fromVersionId", post("/versions", { fromVersionId: unknownId("sv") }), "404"],
            ["an unknown versions field", post("/versions", { status: "draft" }), "400 status"],
            ["an unknown version to read", get("", { versionId: unknownId("sv") }), "404"],
            ["an unknown read parameter", get("", { expand: "1" }), "400 expand"],
            ["an unknown version to diff", get(`/versions/${unknownId("sv")}/diff`), "404"],
            ["another skill's version to diff", get(`/versions/${other.draftVersionId}/diff`), "404"],
            ["an unknown against", get(`/versions/${empty.draftVersionId}/diff`, { against: unknownId("sv") }), "404"],
            ["an unknown diff parameter", get(`/versions/${empty.draftVersionId}/diff`, { from: "x" }), "400 from"],
            ["an unknown skill", () => api.get(`/api/skills/${unknownId("skl")}`, { token: owner.token }), "404"],
          ]),
      );
    });
  });

  describe("PATCH /api/skills/:id", () => {
    it("changes name and description (200)", async () => {
      const skill = await api.createSkill(owner.token, owner.organizationId);
      const patched = ok(
        await api.patch<Skill>(
          `/api/skills/${skill.id}`,
          { name: "Renamed", description: "Better" },
          { token: owner.token },
        ),
      );
      expect(patched).toEqual({ ...skill, name: "Renamed", description: "Better", updatedAt: ISO });
      expect(
        ok(await api.patch<Skill>(`/api/skills/${skill.id}`, { description: "" }, { apiKey: ownerKey })),
      ).toMatchObject({
        name: "Renamed",
        description: "",
      });
    });

    it("refuses bad input with 400 on the field and changes nothing", async () => {
      const skill = await api.createSkill(owner.token, owner.organizationId);
      const send = (body: unknown) => () => api.patch(`/api/skills/${skill.id}`, body, { token: owner.token });
      await changesNothing(
        () => read(`/api/skills/${skill.id}`),
        () =>
          expectRefusals([
            ["an unknown field", send({ draftVersionId: null }), "400 draftVersionId"],
            ["a numeric name", send({ name: 1 }), "400 name"],
            ["a blank name", send({ name: "" }), "400 name"],
            [
              "an unknown skill",
              () => api.patch(`/api/skills/${unknownId("skl")}`, { name: "x" }, { token: owner.token }),
              "404",
            ],
          ]),
      );
    });
  });

  it("round-trips free-form JSON (composition variables) key for key, in order", async () => {
    const skill = await api.createSkill(owner.token, owner.organizationId);
    const [first, last] = steps();
    const res = await api.post<Skill>(
      `/api/skill-versions/${skill.draftVersionId}/prompts`,
      { prompts: [first, { ...last, variables: { forecast: "{{steps.step1.output}}", tone: odd(ODD_BINDING_TEXT) } }] },
      { token: owner.token },
    );
    const composed = ok(res);
    const variablesText = `{"forecast":"{{steps.step1.output}}","tone":${ODD_BINDING_TEXT}}`;
    expect(textOf(composed.promptComposition[1]?.variables)).toBe(variablesText);
    const fetched = await api.get(`/api/skills/${skill.id}`, { token: owner.token });
    expect(fetched.text).toContain(`"variables":${variablesText}`);
    expectNoPollution();
  });
});

describe("lists", () => {
  const families = [
    {
      path: "/api/prompts",
      create: (m: Member) => api.createPrompt(m.token, m.organizationId).then((p) => p.id),
    },
    {
      path: "/api/tools",
      create: (m: Member) => api.createTool(m.token, m.organizationId).then((t) => t.id),
    },
    {
      path: "/api/skills",
      create: (m: Member) => api.createSkill(m.token, m.organizationId).then((s) => s.id),
    },
  ];

  describe.each(families)("GET $path", ({ path, create }) => {
    let member: Member;
    let key: string;
    let ids: string[];

    beforeAll(async () => {
      member = await newMember();
      key = (await api.createApiKey(member.token, member.organizationId, CATALOG_SCOPES)).key;
      ids = [];
      for (let i = 0; i < 3; i++) ids.push(await create(member));
      await create(await newMember()); // another organization's, never listed here
    });

    it("lists newest first with { data, nextCursor: null } (200)", async () => {
      const list = await read<List<{ id: string; organizationId: string }>>(
        path,
        {
          organizationId: member.organizationId,
        },
        member.token,
      );
      expect(Object.keys(list).sort()).toEqual(["data", "nextCursor"]);
      expect(list.data.map((x) => x.id)).toEqual([...ids].reverse());
      expect(list.nextCursor).toBeNull();
    });

    it("pages with ?limit= and ?cursor=", async () => {
      const first = await read<List<{ id: string }>>(
        path,
        { organizationId: member.organizationId, limit: "2" },
        member.token,
      );
      expect(first.data.map((x) => x.id)).toEqual([ids[2], ids[1]]);
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = await read<List<{ id: string }>>(
        path,
        { organizationId: member.organizationId, limit: "2", cursor: first.nextCursor ?? "" },
        member.token,
      );
      expect(second.data.map((x) => x.id)).toEqual([ids[0]]);
      expect(second.nextCursor).toBeNull();
      const exact = await read<List<{ id: string }>>(
        path,
        { organizationId: member.organizationId, limit: "3" },
        member.token,
      );
      expect(exact.data).toHaveLength(3);
      expect(exact.nextCursor).toBeNull();
    });

    it("takes an API key's organization when organizationId is omitted", async () => {
      const list = await read<List<{ id: string }>>(path, { limit: "200" }, key);
      expect(list.data.map((x) => x.id)).toEqual([...ids].reverse());
    });

    it("refuses bad queries with 400 on the field", async () => {
      const org = member.organizationId;
      const get =
        (query: Record<string, string>, credential = member.token) =>
        () =>
          api.get(path, { token: credential, query });
      await expectRefusals([
        ["a user without organizationId", get({}), "400 organizationId"],
        ["limit 0", get({ organizationId: org, limit: "0" }), "400 limit"],
        ["limit 201", get({ organizationId: org, limit: "201" }), "400 limit"],
        ["limit abc", get({ organizationId: org, limit: "abc" }), "400 limit"],
        ["limit -1", get({ organizationId: org, limit: "-1" }), "400 limit"],
        ["a forged cursor", get({ organizationId: org, cursor: "not-a-cursor" }), "400 cursor"],
        ["an unknown parameter", get({ organizationId: org, sort: "name" }), "400 sort"],
        ["an unknown organization", get({ organizationId: unknownId("org") }), "404"],
      ]);
    });
  });
});

/**
 * Every catalog route against callers who may not use it: no credentials (401), a user of another
 * organization (404), an API key of another organization (404 by id; 403 on a list or create that
 * names this organization, api.md "Organization scoping"), a key without the family's scope (403)
 * and a read-only key on a write (403). Nothing changes.
 */
describe("access", () => {
  type Family = "prompts" | "tools" | "skills";
  interface RouteCase {
    route: string;
    family: Family;
    kind: "read" | "write";
    /** Addressed by :id (else a list or create naming the organization). */
    byId: boolean;
    send: (c: TestClient, options: { token?: string }) => Promise<TestResponse>;
  }

  let before: Awaited<ReturnType<typeof snapshot>>;
  let scoped: Record<string, string>;

  let prompt: Prompt;
  let promptDraft: PromptVersion;
  let tool: Tool;
  let toolV2: ToolVersion;
  let skill: Skill;
  let skillDraft: string;

  beforeAll(async () => {
    const published = await api.createPublishedPrompt(owner.token, owner.organizationId, {
      systemPrompt: "About {{city}}",
      variablesSchema: WEATHER_SCHEMA,
    });
    prompt = published.prompt;
    promptDraft = await api.createPromptVersion(owner.token, prompt.id, { systemPrompt: "Draft" });
    tool = await api.createTool(owner.token, owner.organizationId);
    toolV2 = ok(
      await api.post<ToolVersion>(
        `/api/tools/${tool.id}/versions`,
        { config: { result: { v: 2 } } },
        { token: owner.token },
      ),
      201,
    );
    const created = await api.createSkill(owner.token, owner.organizationId);
    await api.replaceSkillPrompts(owner.token, created.draftVersionId ?? "", [{ promptId: prompt.id }]);
    await api.publishSkill(owner.token, created.id);
    skillDraft = ok(
      await api.post<SkillVersion>(`/api/skills/${created.id}/versions`, {}, { token: owner.token }),
      201,
    ).id;
    skill = await read<Skill>(`/api/skills/${created.id}`);
    before = await snapshot();
    const keyWith = async (scopes: string[]) => (await api.createApiKey(owner.token, org(), scopes)).key;
    scoped = {
      // Every scope except the family's.
      "prompts:none": await keyWith(CATALOG_SCOPES.filter((s) => !s.startsWith("prompts:"))),
      "tools:none": await keyWith(CATALOG_SCOPES.filter((s) => !s.startsWith("tools:"))),
      "skills:none": await keyWith(CATALOG_SCOPES.filter((s) => !s.startsWith("skills:"))),
      "prompts:read": await keyWith(["prompts:read"]),
      "tools:read": await keyWith(["tools:read"]),
      "skills:read": await keyWith(["skills:read"]),
    };
  });

  const org = () => owner.organizationId;
  const call =
    (method: Method, path: () => string, body?: () => unknown, query?: () => Record<string, string>) =>
    (c: TestClient, options: { token?: string }) =>
      c.request(method, path(), { ...options, body: body?.(), query: query?.() });

  const routes: RouteCase[] = [
    {
      route: "GET /api/prompts",
      family: "prompts",
      kind: "read",
      byId: false,
      send: call(
        "GET",
        () => "/api/prompts",
        undefined,
        () => ({ organizationId: org() }),
      ),
    },
    {
      route: "POST /api/prompts",
      family: "prompts",
      kind: "write",
      byId: false,
      send: call(
        "POST",
        () => "/api/prompts",
        () => ({ organizationId: org(), name: "Intruder" }),
      ),
    },
    {
      route: "GET /api/prompts/:id",
      family: "prompts",
      kind: "read",
      byId: true,
      send: call("GET", () => `/api/prompts/${prompt.id}`),
    },
    {
      route: "PATCH /api/prompts/:id",
      family: "prompts",
      kind: "write",
      byId: true,
      send: call(
        "PATCH",
        () => `/api/prompts/${prompt.id}`,
        () => ({ name: "Hijacked" }),
      ),
    },
    {
      route: "POST /api/prompts/:id/versions",
      family: "prompts",
      kind: "write",
      byId: true,
      send: call(
        "POST",
        () => `/api/prompts/${prompt.id}/versions`,
        () => ({ systemPrompt: "Hijacked" }),
      ),
    },
    {
      route: "POST /api/prompts/:id/publish",
      family: "prompts",
      kind: "write",
      byId: true,
      send: call(
        "POST",
        () => `/api/prompts/${prompt.id}/publish`,
        () => ({ versionId: promptDraft.id }),
      ),
    },
    {
      route: "GET /api/tools",
      family: "tools",
      kind: "read",
      byId: false,
      send: call(
        "GET",
        () => "/api/tools",
        undefined,
        () => ({ organizationId: org() }),
      ),
    },
    {
      route: "POST /api/tools",
      family: "tools",
      kind: "write",
      byId: false,
      send: call(
        "POST",
        () => "/api/tools",
        () => ({
          organizationId: org(),
          toolKey: "intruder",
          name: "I",
          type: "manual_stub",
          config: { result: {} },
          inputSchema: { type: "object" },
        }),
      ),
    },
    {
      route: "GET /api/tools/:id",
      family: "tools",
      kind: "read",
      byId: true,
      send: call("GET", () => `/api/tools/${tool.id}`),
    },
    {
      route: "PATCH /api/tools/:id",
      family: "tools",
      kind: "write",
      byId: true,
      send: call(
        "PATCH",
        () => `/api/tools/${tool.id}`,
        () => ({ name: "Hijacked" }),
      ),
    },
    {
      route: "POST /api/tools/:id/versions",
      family: "tools",
      kind: "write",
      byId: true,
      send: call(
        "POST",
        () => `/api/tools/${tool.id}/versions`,
        () => ({ config: { result: { hijacked: true } } }),
      ),
    },
    {
      route: "GET /api/tools/:id/versions/:versionId/diff",
      family: "tools",
      kind: "read",
      byId: true,
      send: call("GET", () => `/api/tools/${tool.id}/versions/${toolV2.id}/diff`),
    },
    {
      route: "GET /api/skills",
      family: "skills",
      kind: "read",
      byId: false,
      send: call(
        "GET",
        () => "/api/skills",
        undefined,
        () => ({ organizationId: org() }),
      ),
    },
    {
      route: "POST /api/skills",
      family: "skills",
      kind: "write",
      byId: false,
      send: call(
        "POST",
        () => "/api/skills",
        () => ({ organizationId: org(), name: "Intruder" }),
      ),
    },
    {
      route: "GET /api/skills/:id",
      family: "skills",
      kind: "read",
      byId: true,
      send: call("GET", () => `/api/skills/${skill.id}`),
    },
    {
      route: "PATCH /api/skills/:id",
      family: "skills",
      kind: "write",
      byId: true,
      send: call(
        "PATCH",
        () => `/api/skills/${skill.id}`,
        () => ({ name: "Hijacked" }),
      ),
    },
    {
      route: "POST /api/skills/:id/versions",
      family: "skills",
      kind: "write",
      byId: true,
      send: call(
        "POST",
        () => `/api/skills/${skill.id}/versions`,
        () => ({}),
      ),
    },
    {
      route: "POST /api/skills/:id/publish",
      family: "skills",
      kind: "write",
      byId: true,
      send: call(
        "POST",
        () => `/api/skills/${skill.id}/publish`,
        () => ({ versionId: skillDraft }),
      ),
    },
    {
      route: "GET /api/skills/:id/versions/:versionId/diff",
      family: "skills",
      kind: "read",
      byId: true,
      send: call("GET", () => `/api/skills/${skill.id}/versions/${skillDraft}/diff`),
    },
    {
      route: "POST /api/skill-versions/:id/prompts",
      family: "skills",
      kind: "write",
      byId: true,
      send: call(
        "POST",
        () => `/api/skill-versions/${skillDraft}/prompts`,
        () => ({ prompts: [] }),
      ),
    },
    {
      route: "POST /api/skill-versions/:id/tools",
      family: "skills",
      kind: "write",
      byId: true,
      send: call(
        "POST",
        () => `/api/skill-versions/${skillDraft}/tools`,
        () => ({ tools: [tool.id] }),
      ),
    },
  ];

  /** Everything organization A holds, as its owner reads it. */
  async function snapshot() {
    const lists = await Promise.all(
      ["/api/prompts", "/api/tools", "/api/skills"].map((p) => read(p, { organizationId: org(), limit: "200" })),
    );
    return {
      lists,
      prompt: await read(`/api/prompts/${prompt.id}`),
      tool: await read(`/api/tools/${tool.id}`),
      skill: await read(`/api/skills/${skill.id}`),
      draft: await read(`/api/skills/${skill.id}`, { versionId: skillDraft }),
    };
  }

  it("covers every catalog route", () => {
    expect(routes).toHaveLength(21);
  });

  it.each(routes)("$route: 401 without credentials, 401 with a bad key, beta", async ({ send }) => {
    expectError(await send(api, {}), 401, "unauthenticated");
    expectError(await send(api, { token: `sk_${"0".repeat(32)}_${"A".repeat(43)}` }), 401, "unauthenticated");
  });

  it.each(routes)("$route: a user of another organization gets 404", async ({ send }) => {
    expectError(await send(api, { token: stranger.token }), 404, "not_found");
  });

  it.each(routes)("$route: an API key of another organization is refused", async ({ send, byId }) => {
    if (byId) expectError(await send(api, { token: strangerKey }), 404, "not_found");
    else expectError(await send(api, { token: strangerKey }), 403, "permission_denied");
  });

  it.each(routes)("$route: a key without the family's scope gets 403", async ({ send, family }) => {
    expectError(await send(api, { token: scoped[`${family}:none`] }), 403, "permission_denied");
  });

  it.each(routes.filter((r) => r.kind === "write"))(
    "$route: a read-only key cannot write (403)",
    async ({ send, family }) => {
      expectError(await send(api, { token: scoped[`${family}:read`] }), 403, "permission_denied");
    },
  );

  it.each(routes.filter((r) => r.kind === "read"))(
    "$route: a read-only key can read (200)",
    async ({ send, family }) => {
      ok(await send(api, { token: scoped[`${family}:read`] }));
    },
  );

  it("changed nothing", async () => {
    expect(await snapshot()).toEqual(before);
  });
});

describe("the OpenAPI document", () => {
  it("documents every catalog route as beta with request and response schemas", async () => {
    type Operation = {
      requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
      parameters?: { in: string; name: string }[];
      responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
    };
    const doc = (await api.get<{ paths: Record<string, Record<string, Operation>> }>("/api/openapi.json")).body;
    const expected: [string, string, number][] = [
      ["get", "/api/prompts", 200],
      ["post", "/api/prompts", 201],
      ["get", "/api/prompts/{id}", 200],
      ["patch", "/api/prompts/{id}", 200],
      ["post", "/api/prompts/{id}/versions", 201],
      ["post", "/api/prompts/{id}/publish", 200],
      ["get", "/api/tools", 200],
      ["post", "/api/tools", 201],
      ["get", "/api/tools/{id}", 200],
      ["patch", "/api/tools/{id}", 200],
      ["post", "/api/tools/{id}/versions", 201],
      ["get", "/api/tools/{id}/versions/{versionId}/diff", 200],
      ["get", "/api/skills", 200],
      ["post", "/api/skills", 201],
      ["get", "/api/skills/{id}", 200],
      ["patch", "/api/skills/{id}", 200],
      ["post", "/api/skills/{id}/versions", 201],
      ["post", "/api/skills/{id}/publish", 200],
      ["get", "/api/skills/{id}/versions/{versionId}/diff", 200],
      ["post", "/api/skill-versions/{id}/prompts", 200],
      ["post", "/api/skill-versions/{id}/tools", 200],
    ];
    for (const [method, path, status] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      if (!op) continue;
      const success = op.responses[String(status)]?.content?.["application/json"]?.schema;
      expect(success, `${method} ${path} ${status}`).toBeDefined();
      expect(
        Object.keys(op.responses).filter((s) => s.startsWith("2")),
        `${method} ${path}`,
      ).toEqual([String(status)]);
      for (const error of ["400", "401", "403", "404"]) {
        expect(op.responses[error]?.content?.["application/json"]?.schema?.$ref, `${method} ${path} ${error}`).toBe(
          "#/components/schemas/ErrorEnvelope",
        );
      }
      if (method === "post" || method === "patch") {
        const body = op.requestBody?.content["application/json"]?.schema;
        expect(body, `${method} ${path} body`).toMatchObject({ type: "object", additionalProperties: false });
      }
    }
  });
});
