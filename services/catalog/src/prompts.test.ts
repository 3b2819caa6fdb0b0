import type { Principal } from "@kiln/kit/principal";
import { beforeEach, describe, expect, it } from "vitest";
import {
  createTestCatalog,
  ORG_A,
  ORG_B,
  ORG_NO_AI,
  principals,
  rejectionOf,
  snapshotOf,
} from "../test/test-catalog.js";

const { userA, userB, keyA, keyAReadOnly, userNoAiPermission, service } = principals;

let catalog: Awaited<ReturnType<typeof createTestCatalog>>;
beforeEach(async () => {
  catalog = await createTestCatalog();
});

const CITY_SCHEMA = '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}';

async function newPrompt(organizationId = ORG_A, principal: Principal = userA) {
  const view = await catalog.prompts.createPrompt(principal, { organizationId, name: "Weather", description: "" });
  return view.prompt._id;
}

async function newVersion(promptId: string, extra: Record<string, unknown> = {}) {
  return catalog.prompts.createPromptVersion(userA, {
    promptId,
    systemPrompt: "Weather in {{city}}",
    variablesSchemaJson: CITY_SCHEMA,
    tools: [],
    ...extra,
  });
}

async function newTool(toolKey: string, organizationId = ORG_A, principal: Principal = userA) {
  return catalog.tools.createTool(principal, {
    organizationId,
    toolKey,
    name: toolKey,
    description: "",
    type: "manual_stub",
    configJson: '{"result":{"ok":true}}',
    inputSchemaJson: '{"type":"object"}',
  });
}

describe("createPrompt", () => {
  it("creates a prompt with no versions, authorized for prompts:write in the organization", async () => {
    const view = await catalog.prompts.createPrompt(userA, {
      organizationId: ORG_A,
      name: "  Weather  ",
      description: "Forecasts",
      defaultModel: "openai/gpt-4o-mini",
    });
    expect(view.prompt).toMatchObject({
      organizationId: ORG_A,
      name: "Weather",
      description: "Forecasts",
      defaultModel: "openai/gpt-4o-mini",
    });
    expect(view.prompt._id).toMatch(/^prm_[0-9a-f]{32}$/);
    expect(view).toMatchObject({ versions: [], latestVersion: 0, publishedVersionId: null, version: null });
    expect(catalog.identityAuth.calls.at(-1)).toEqual({
      principal: userA,
      input: { organizationId: ORG_A, requireAi: true, scope: "prompts:write" },
    });
  });

  it("refuses bad input with field details and stores nothing", async () => {
    const before = await snapshotOf(catalog.collections);
    const error = await rejectionOf(
      catalog.prompts.createPrompt(userA, {
        organizationId: ORG_A,
        name: " ",
        description: "x".repeat(2_001),
        defaultModel: "gpt",
      }),
    );
    expect(error.kind).toBe("invalid_argument");
    expect(error.details.map((d) => d.field)).toEqual(["name", "description", "defaultModel"]);
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });

  it("requires an organization id", async () => {
    const error = await rejectionOf(
      catalog.prompts.createPrompt(userA, { organizationId: "", name: "x", description: "" }),
    );
    expect(error).toMatchObject({
      kind: "invalid_argument",
      details: [{ field: "organizationId", issue: "is required" }],
    });
  });

  it("is not_found in a foreign organization and permission_denied without AI or the scope", async () => {
    const input = { name: "x", description: "" };
    expect((await rejectionOf(catalog.prompts.createPrompt(userA, { ...input, organizationId: ORG_B }))).kind).toBe(
      "not_found",
    );
    expect((await rejectionOf(catalog.prompts.createPrompt(userA, { ...input, organizationId: ORG_NO_AI }))).kind).toBe(
      "permission_denied",
    );
    expect(
      (await rejectionOf(catalog.prompts.createPrompt(userNoAiPermission, { ...input, organizationId: ORG_A }))).kind,
    ).toBe("permission_denied");
    expect(
      (await rejectionOf(catalog.prompts.createPrompt(keyAReadOnly, { ...input, organizationId: ORG_A }))).kind,
    ).toBe("permission_denied");
    expect(
      (await rejectionOf(catalog.prompts.createPrompt(principals.keyB, { ...input, organizationId: ORG_A }))).kind,
    ).toBe("permission_denied");
    expect(await catalog.collections.prompts.countDocuments({})).toBe(0);
    await catalog.prompts.createPrompt(keyA, { ...input, organizationId: ORG_A });
    await catalog.prompts.createPrompt(service, { ...input, organizationId: ORG_A });
    expect(await catalog.collections.prompts.countDocuments({})).toBe(2);
  });
});

describe("getPrompt", () => {
  it("describes the published version, else the latest, or the one asked for", async () => {
    const id = await newPrompt();
    const v1 = await newVersion(id);
    const v2 = await newVersion(id);
    let view = await catalog.prompts.getPrompt(userA, { id, versionId: "" });
    expect(view.version?._id).toBe(v2._id);
    expect(view.versions.map((v) => v.version)).toEqual([1, 2]);
    expect(view.latestVersion).toBe(2);
    await catalog.prompts.publishPromptVersion(userA, { promptId: id, versionId: v1._id });
    view = await catalog.prompts.getPrompt(userA, { id, versionId: "" });
    expect(view.version?._id).toBe(v1._id);
    expect(view.publishedVersionId).toBe(v1._id);
    view = await catalog.prompts.getPrompt(keyAReadOnly, { id, versionId: v2._id });
    expect(view.version?._id).toBe(v2._id);
  });

  it("hides prompts of other organizations and unknown versions as not_found", async () => {
    const id = await newPrompt();
    const foreign = await rejectionOf(catalog.prompts.getPrompt(userB, { id, versionId: "" }));
    expect(foreign).toMatchObject({ kind: "not_found", message: "prompt not found" });
    const foreignKey = await rejectionOf(catalog.prompts.getPrompt(principals.keyB, { id, versionId: "" }));
    expect(foreignKey).toMatchObject({ kind: "not_found", message: "prompt not found" });
    expect((await rejectionOf(catalog.prompts.getPrompt(userA, { id: "prm_nope", versionId: "" }))).message).toBe(
      "prompt not found",
    );
    const otherId = await newPrompt();
    const otherVersion = await newVersion(otherId);
    expect((await rejectionOf(catalog.prompts.getPrompt(userA, { id, versionId: otherVersion._id }))).message).toBe(
      "prompt version not found",
    );
  });
});

describe("listPrompts", () => {
  it("lists one organization's prompts newest first, page by page", async () => {
    const ids = [await newPrompt(), await newPrompt(), await newPrompt()];
    await newPrompt(ORG_B, userB);
    await newVersion(ids[0] ?? "");
    const first = await catalog.prompts.listPrompts(userA, { organizationId: ORG_A, limit: 2, cursor: "" });
    expect(first.items.map((v) => v.prompt._id)).toEqual([ids[2], ids[1]]);
    expect(first.nextCursor).not.toBe("");
    const second = await catalog.prompts.listPrompts(userA, {
      organizationId: ORG_A,
      limit: 2,
      cursor: first.nextCursor,
    });
    expect(second.items.map((v) => v.prompt._id)).toEqual([ids[0]]);
    expect(second.items[0]?.latestVersion).toBe(1);
    expect(second.nextCursor).toBe("");
  });

  it("refuses a missing organization, a bad limit and a foreign organization", async () => {
    expect(
      (await rejectionOf(catalog.prompts.listPrompts(userA, { organizationId: "", limit: 0, cursor: "" }))).kind,
    ).toBe("invalid_argument");
    expect(
      (await rejectionOf(catalog.prompts.listPrompts(userA, { organizationId: ORG_A, limit: 201, cursor: "" })))
        .details,
    ).toEqual([{ field: "limit", issue: "must be an integer from 1 to 200" }]);
    expect(
      (await rejectionOf(catalog.prompts.listPrompts(userA, { organizationId: ORG_B, limit: 0, cursor: "" }))).kind,
    ).toBe("not_found");
  });
});

describe("updatePrompt", () => {
  it("changes name, description and default model, and clears the default model", async () => {
    const id = await newPrompt();
    let view = await catalog.prompts.updatePrompt(userA, {
      id,
      name: "Forecast",
      description: "d",
      defaultModel: "local/echo",
      clearDefaultModel: false,
    });
    expect(view.prompt).toMatchObject({ name: "Forecast", description: "d", defaultModel: "local/echo" });
    expect(view.prompt.updatedAt.getTime()).toBeGreaterThan(view.prompt.createdAt.getTime());
    view = await catalog.prompts.updatePrompt(userA, { id, clearDefaultModel: true });
    expect(view.prompt).toMatchObject({ name: "Forecast", defaultModel: null });
  });

  it("refuses setting and clearing at once, an empty name, and callers without access", async () => {
    const id = await newPrompt();
    const before = await snapshotOf(catalog.collections);
    const error = await rejectionOf(
      catalog.prompts.updatePrompt(userA, { id, name: "", defaultModel: "local/echo", clearDefaultModel: true }),
    );
    expect(error.details).toEqual([
      { field: "name", issue: "is required" },
      { field: "defaultModel", issue: "cannot be set and cleared at once" },
    ]);
    expect(
      (await rejectionOf(catalog.prompts.updatePrompt(userB, { id, name: "x", clearDefaultModel: false }))).kind,
    ).toBe("not_found");
    expect(
      (await rejectionOf(catalog.prompts.updatePrompt(keyAReadOnly, { id, name: "x", clearDefaultModel: false }))).kind,
    ).toBe("permission_denied");
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });
});

describe("createPromptVersion", () => {
  it("numbers versions 1, 2, 3 and stores the content as given", async () => {
    const id = await newPrompt();
    const v1 = await newVersion(id, {
      developerPrompt: "Answer in {{city}}'s language.",
      responseFormatJson: '{"type":"json_schema","schema":{"type":"object"}}',
      temperature: 0.2,
      maxOutputTokens: 256,
    });
    expect(v1).toMatchObject({
      promptId: id,
      organizationId: ORG_A,
      version: 1,
      status: "draft",
      systemPrompt: "Weather in {{city}}",
      developerPrompt: "Answer in {{city}}'s language.",
      variablesSchema: CITY_SCHEMA,
      responseFormat: '{"type":"json_schema","schema":{"type":"object"}}',
      temperature: 0.2,
      maxOutputTokens: 256,
      model: null,
      tools: [],
      publishedAt: null,
    });
    expect(v1._id).toMatch(/^pv_/);
    expect((await newVersion(id)).version).toBe(2);
    expect((await newVersion(id)).version).toBe(3);
  });

  it("keeps who created a version and its change message, in the version and in the list of versions", async () => {
    const id = await newPrompt();
    const byUser = await newVersion(id, { message: "Ask for the city first.\nShorter." });
    const byKey = await catalog.prompts.createPromptVersion(keyA, { promptId: id, systemPrompt: "x", tools: [] });
    expect(byUser).toMatchObject({
      createdBy: { type: "user", id: userA.id },
      message: "Ask for the city first.\nShorter.",
    });
    expect(byKey).toMatchObject({ createdBy: { type: "api_key", id: keyA.id }, message: null });
    const view = await catalog.prompts.getPrompt(userA, { id, versionId: "" });
    expect(view.versions.map((v) => [v.createdBy, v.message])).toEqual([
      [{ type: "user", id: userA.id }, "Ask for the city first.\nShorter."],
      [{ type: "api_key", id: keyA.id }, null],
    ]);
  });

  it("refuses a change message over the limit, naming the field, and stores nothing", async () => {
    const id = await newPrompt();
    const before = await snapshotOf(catalog.collections);
    const error = await rejectionOf(newVersion(id, { message: "x".repeat(1_001) }));
    expect(error.kind).toBe("invalid_argument");
    expect(error.details.map((d) => d.field)).toEqual(["message"]);
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });

  it("fixes the model at creation: the request's, else the prompt's default", async () => {
    const id = await newPrompt();
    await catalog.prompts.updatePrompt(userA, { id, defaultModel: "openai/gpt-4o", clearDefaultModel: false });
    const inherited = await newVersion(id);
    const explicit = await newVersion(id, { model: "local/echo" });
    await catalog.prompts.updatePrompt(userA, { id, defaultModel: "openai/gpt-4.1", clearDefaultModel: false });
    const view = await catalog.prompts.getPrompt(userA, { id, versionId: inherited._id });
    expect(view.version?.model).toBe("openai/gpt-4o");
    expect(explicit.model).toBe("local/echo");
  });

  it("refuses an undeclared placeholder and stores nothing", async () => {
    const id = await newPrompt();
    const before = await snapshotOf(catalog.collections);
    const error = await rejectionOf(newVersion(id, { systemPrompt: "Weather in {{town}}" }));
    expect(error).toMatchObject({
      kind: "invalid_argument",
      details: [{ field: "systemPrompt", issue: 'uses {{town}}, but variablesSchema declares no variable "town"' }],
    });
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });

  it("pins a bare tool id to the tool's current version and keeps explicit pins", async () => {
    const id = await newPrompt();
    const weather = await newTool("weather");
    const clock = await newTool("clock");
    const weather2 = await catalog.tools.createToolVersion(userA, {
      toolId: weather.tool._id,
      configJson: '{"result":{"v":2}}',
    });
    const version = await newVersion(id, {
      tools: [{ toolId: weather.tool._id }, { toolId: clock.tool._id, toolVersionId: clock.current._id }],
    });
    expect(version.tools).toEqual([
      { toolId: weather.tool._id, toolVersionId: weather2._id, toolKey: "weather" },
      { toolId: clock.tool._id, toolVersionId: clock.current._id, toolKey: "clock" },
    ]);
  });

  it("refuses a duplicate tool key (400) and tools of other organizations or unknown versions (404)", async () => {
    const id = await newPrompt();
    const weather = await newTool("weather");
    const foreign = await newTool("weather", ORG_B, userB);
    const before = await snapshotOf(catalog.collections);
    const duplicate = await rejectionOf(
      newVersion(id, {
        tools: [{ toolId: weather.tool._id }, { toolId: weather.tool._id, toolVersionId: weather.current._id }],
      }),
    );
    expect(duplicate).toMatchObject({
      kind: "invalid_argument",
      details: [{ field: "tools[1]", issue: 'tool key "weather" is already listed at tools[0]' }],
    });
    const other = await rejectionOf(newVersion(id, { tools: [{ toolId: foreign.tool._id }] }));
    expect(other).toMatchObject({ kind: "not_found", details: [{ field: "tools[0].toolId" }] });
    const badVersion = await rejectionOf(
      newVersion(id, { tools: [{ toolId: weather.tool._id, toolVersionId: foreign.current._id }] }),
    );
    expect(badVersion).toMatchObject({ kind: "not_found", details: [{ field: "tools[0].toolVersionId" }] });
    expect((await rejectionOf(newVersion(id, { tools: [{ toolId: "" }] }))).kind).toBe("invalid_argument");
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });

  it("is not_found for another organization's prompt and forbidden to a read-only key", async () => {
    const id = await newPrompt();
    const foreign = await rejectionOf(
      catalog.prompts.createPromptVersion(userB, { promptId: id, systemPrompt: "x", tools: [] }),
    );
    expect(foreign).toMatchObject({ kind: "not_found", message: "prompt not found" });
    const readOnly = await rejectionOf(
      catalog.prompts.createPromptVersion(keyAReadOnly, { promptId: id, systemPrompt: "x", tools: [] }),
    );
    expect(readOnly.kind).toBe("permission_denied");
    expect(await catalog.collections.promptVersions.countDocuments({})).toBe(0);
  });

  it("gives concurrent creations distinct, consecutive numbers", async () => {
    const id = await newPrompt();
    const versions = await Promise.all(Array.from({ length: 8 }, () => newVersion(id)));
    expect(versions.map((v) => v.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe("publishPromptVersion", () => {
  it("publishes once; older published versions stay published and the newest publish is live", async () => {
    const id = await newPrompt();
    const v1 = await newVersion(id);
    const v2 = await newVersion(id);
    let view = await catalog.prompts.publishPromptVersion(userA, { promptId: id, versionId: v1._id });
    expect(view.publishedVersionId).toBe(v1._id);
    expect(view.versions[0]).toMatchObject({ status: "published", publishedAt: expect.any(Date) });
    view = await catalog.prompts.publishPromptVersion(userA, { promptId: id, versionId: v2._id });
    expect(view.publishedVersionId).toBe(v2._id);
    expect(view.versions.map((v) => v.status)).toEqual(["published", "published"]);
    expect(view.version?._id).toBe(v2._id);
  });

  it("refuses a second publish (409), a missing version id (400) and another prompt's version (404)", async () => {
    const id = await newPrompt();
    const other = await newPrompt();
    const v1 = await newVersion(id);
    const foreignVersion = await newVersion(other);
    await catalog.prompts.publishPromptVersion(userA, { promptId: id, versionId: v1._id });
    const before = await snapshotOf(catalog.collections);
    const twice = await rejectionOf(catalog.prompts.publishPromptVersion(userA, { promptId: id, versionId: v1._id }));
    expect(twice).toMatchObject({
      kind: "failed_precondition",
      details: [{ field: "versionId", issue: "is already published" }],
    });
    expect((await rejectionOf(catalog.prompts.publishPromptVersion(userA, { promptId: id, versionId: "" }))).kind).toBe(
      "invalid_argument",
    );
    expect(
      (await rejectionOf(catalog.prompts.publishPromptVersion(userA, { promptId: id, versionId: foreignVersion._id })))
        .message,
    ).toBe("prompt version not found");
    expect(
      (await rejectionOf(catalog.prompts.publishPromptVersion(userB, { promptId: id, versionId: v1._id }))).kind,
    ).toBe("not_found");
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });
});
