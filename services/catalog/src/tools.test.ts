import { hostAllowlistOf } from "@kiln/kit/outbound/host-config";
import type { Principal } from "@kiln/kit/principal";
import { beforeEach, describe, expect, it } from "vitest";
import { createTestCatalog, ORG_A, ORG_B, principals, rejectionOf, snapshotOf } from "../test/test-catalog.js";

const { userA, userB, keyAReadOnly } = principals;

let catalog: Awaited<ReturnType<typeof createTestCatalog>>;
beforeEach(async () => {
  catalog = await createTestCatalog({
    allowlist: hostAllowlistOf({
      HTTP_TOOL_ALLOWED_HOSTS: "*.weather.test",
      HTTP_TOOL_ALLOWED_HOSTS_BY_ORG: JSON.stringify({ [ORG_B]: ["eu.weather.test"] }),
    }),
  });
});

const STUB = {
  type: "manual_stub",
  configJson: '{"result":{"city":"Oslo","temp":3}}',
  inputSchemaJson: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}',
};

function createTool(overrides: Record<string, string> = {}, principal: Principal = userA) {
  return catalog.tools.createTool(principal, {
    organizationId: ORG_A,
    toolKey: "weather",
    name: "Weather",
    description: "",
    ...STUB,
    ...overrides,
  });
}

describe("createTool", () => {
  it("creates the tool with version 1 as its current version", async () => {
    const view = await createTool({ description: "Fixed weather" });
    expect(view.tool).toMatchObject({
      organizationId: ORG_A,
      toolKey: "weather",
      name: "Weather",
      description: "Fixed weather",
    });
    expect(view.tool._id).toMatch(/^tool_/);
    expect(view.current).toMatchObject({
      toolId: view.tool._id,
      version: 1,
      type: "manual_stub",
      config: STUB.configJson,
    });
    expect(view.current._id).toMatch(/^tv_/);
    expect(view.latestVersion).toBe(1);
    expect(catalog.identityAuth.calls.at(-1)?.input.scope).toBe("tools:write");
  });

  it("accepts an http tool on an allowlisted host", async () => {
    const view = await createTool({ type: "http", configJson: '{"url":"https://api.weather.test/v1","method":"GET"}' });
    expect(view.current.type).toBe("http");
  });

  it("refuses a second toolKey in the organization with already_exists and leaves nothing behind", async () => {
    await createTool();
    const before = await snapshotOf(catalog.collections);
    const error = await rejectionOf(createTool({ name: "Other" }));
    expect(error).toMatchObject({ kind: "already_exists", details: [{ field: "toolKey", issue: "is taken" }] });
    expect(await snapshotOf(catalog.collections)).toEqual(before);
    await createTool({ organizationId: ORG_B }, userB);
  });

  it("refuses bad input with field details and stores nothing", async () => {
    const error = await rejectionOf(
      createTool({
        toolKey: "no spaces",
        name: "",
        type: "grpc",
        configJson: "{}",
        inputSchemaJson: '{"type":"string"}',
      }),
    );
    expect(error.kind).toBe("invalid_argument");
    expect(error.details).toEqual([
      { field: "toolKey", issue: "must be 1 to 64 letters, digits, _ or -" },
      { field: "name", issue: "is required" },
      { field: "type", issue: "must be one of manual_stub, http" },
      { field: "inputSchema.type", issue: 'must be "object"' },
    ]);
    const config = await rejectionOf(createTool({ configJson: '{"result":{},"extra":1}', inputSchemaJson: "" }));
    expect(config.details).toEqual([
      { field: "config.extra", issue: "is not a setting of manual_stub tools" },
      { field: "inputSchema", issue: "is required" },
    ]);
    const host = await rejectionOf(
      createTool({ type: "http", configJson: '{"url":"https://evil.test/","method":"GET"}' }),
    );
    expect(host.details).toEqual([
      { field: "config.url", issue: 'host "evil.test" is not on the allowlist of this deployment' },
    ]);
    expect(await catalog.collections.tools.countDocuments({})).toBe(0);
    expect(await catalog.collections.toolVersions.countDocuments({})).toBe(0);
  });

  it("narrows the allowlist per organization", async () => {
    const http = (url: string) => ({
      organizationId: ORG_B,
      type: "http",
      configJson: `{"url":"${url}","method":"POST"}`,
    });
    expect((await rejectionOf(createTool(http("https://us.weather.test/"), userB))).details[0]?.field).toBe(
      "config.url",
    );
    await createTool(http("https://eu.weather.test/"), userB);
  });

  it("is not_found in a foreign organization and forbidden to a read-only key", async () => {
    expect((await rejectionOf(createTool({ organizationId: ORG_B }))).kind).toBe("not_found");
    expect((await rejectionOf(createTool({}, keyAReadOnly))).kind).toBe("permission_denied");
  });
});

describe("getTool, listTools, updateTool", () => {
  it("reads a tool with its current version and hides other organizations' tools", async () => {
    const { tool } = await createTool();
    const v2 = await catalog.tools.createToolVersion(userA, { toolId: tool._id, configJson: '{"result":{}}' });
    const view = await catalog.tools.getTool(keyAReadOnly, { id: tool._id });
    expect(view.current._id).toBe(v2._id);
    expect(view.latestVersion).toBe(2);
    expect(await rejectionOf(catalog.tools.getTool(userB, { id: tool._id }))).toMatchObject({
      kind: "not_found",
      message: "tool not found",
    });
  });

  it("lists the organization's tools newest first", async () => {
    const a = await createTool({ toolKey: "a" });
    const b = await createTool({ toolKey: "b" });
    await createTool({ organizationId: ORG_B, toolKey: "c" }, userB);
    const page = await catalog.tools.listTools(userA, { organizationId: ORG_A, limit: 0, cursor: "" });
    expect(page.items.map((v) => v.tool._id)).toEqual([b.tool._id, a.tool._id]);
    expect(page.items.map((v) => v.current.version)).toEqual([1, 1]);
    expect(page.nextCursor).toBe("");
  });

  it("changes only name and description", async () => {
    const { tool } = await createTool();
    const view = await catalog.tools.updateTool(userA, { id: tool._id, name: "Forecast", description: "new" });
    expect(view.tool).toMatchObject({ name: "Forecast", description: "new", toolKey: "weather" });
    expect(view.latestVersion).toBe(1);
    const before = await snapshotOf(catalog.collections);
    expect((await rejectionOf(catalog.tools.updateTool(userA, { id: tool._id, name: "  " }))).details).toEqual([
      { field: "name", issue: "is required" },
    ]);
    expect((await rejectionOf(catalog.tools.updateTool(keyAReadOnly, { id: tool._id, name: "x" }))).kind).toBe(
      "permission_denied",
    );
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });
});

describe("createToolVersion", () => {
  it("copies omitted fields from the current version and becomes current", async () => {
    const { tool, current } = await createTool();
    const v2 = await catalog.tools.createToolVersion(userA, {
      toolId: tool._id,
      configJson: '{"result":{"city":"Bergen"}}',
    });
    expect(v2).toMatchObject({
      version: 2,
      type: "manual_stub",
      inputSchema: current.inputSchema,
      config: '{"result":{"city":"Bergen"}}',
    });
    const v3 = await catalog.tools.createToolVersion(userA, {
      toolId: tool._id,
      type: "http",
      configJson: '{"url":"https://x.weather.test","method":"GET","timeoutMs":500}',
    });
    expect(v3).toMatchObject({ version: 3, type: "http", inputSchema: current.inputSchema });
    expect((await catalog.tools.getTool(userA, { id: tool._id })).current._id).toBe(v3._id);
  });

  it("checks the whole snapshot: a new type with the old config is refused", async () => {
    const { tool } = await createTool();
    const before = await snapshotOf(catalog.collections);
    const error = await rejectionOf(catalog.tools.createToolVersion(userA, { toolId: tool._id, type: "http" }));
    expect(error.kind).toBe("invalid_argument");
    expect(error.details).toContainEqual({ field: "config.result", issue: "is not a setting of http tools" });
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });

  it("is not_found for another organization's tool", async () => {
    const { tool } = await createTool();
    expect((await rejectionOf(catalog.tools.createToolVersion(userB, { toolId: tool._id }))).kind).toBe("not_found");
  });
});

describe("diffToolVersions", () => {
  it("diffs against the version just before by default, and version 1 against nothing", async () => {
    const { tool, current } = await createTool();
    const v2 = await catalog.tools.createToolVersion(userA, {
      toolId: tool._id,
      configJson: '{"result":{"city":"Bergen","temp":3}}',
      inputSchemaJson: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city","days"]}',
    });
    const diff = await catalog.tools.diffToolVersions(keyAReadOnly, {
      toolId: tool._id,
      versionId: v2._id,
      againstVersionId: "",
    });
    expect(diff.from).toEqual({ versionId: current._id, version: 1 });
    expect(diff.to).toEqual({ versionId: v2._id, version: 2 });
    expect(diff.changes).toEqual([
      { op: "add", path: "/inputSchema/required/1", after: "days" },
      { op: "replace", path: "/config/result/city", before: "Oslo", after: "Bergen" },
    ]);
    expect(diff.summary).toBe("2 changes: added /inputSchema/required/1, replaced /config/result/city");

    const first = await catalog.tools.diffToolVersions(userA, {
      toolId: tool._id,
      versionId: current._id,
      againstVersionId: "",
    });
    expect(first.from).toBeNull();
    expect(first.changes.map((c) => `${c.op} ${c.path}`)).toEqual(["add /type", "add /config", "add /inputSchema"]);

    const backwards = await catalog.tools.diffToolVersions(userA, {
      toolId: tool._id,
      versionId: current._id,
      againstVersionId: v2._id,
    });
    expect(backwards.from?.version).toBe(2);
    expect(backwards.changes).toContainEqual({ op: "remove", path: "/inputSchema/required/1", before: "days" });
  });

  it("is not_found for versions of another tool and invalid without a version id", async () => {
    const a = await createTool({ toolKey: "a" });
    const b = await createTool({ toolKey: "b" });
    const against = await rejectionOf(
      catalog.tools.diffToolVersions(userA, {
        toolId: a.tool._id,
        versionId: a.current._id,
        againstVersionId: b.current._id,
      }),
    );
    expect(against).toMatchObject({ kind: "not_found", message: "tool version not found" });
    const version = await rejectionOf(
      catalog.tools.diffToolVersions(userA, { toolId: a.tool._id, versionId: b.current._id, againstVersionId: "" }),
    );
    expect(version.kind).toBe("not_found");
    expect(
      (
        await rejectionOf(
          catalog.tools.diffToolVersions(userA, { toolId: a.tool._id, versionId: "", againstVersionId: "" }),
        )
      ).kind,
    ).toBe("invalid_argument");
    expect(
      (
        await rejectionOf(
          catalog.tools.diffToolVersions(userB, { toolId: a.tool._id, versionId: a.current._id, againstVersionId: "" }),
        )
      ).kind,
    ).toBe("not_found");
  });
});
