import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createInternalTokens } from "@kiln/kit/auth";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { createLogger } from "@kiln/kit/logger";
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import type { Principal } from "@kiln/kit/principal";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { remoteErrorOf } from "@kiln/kit/rpc/errors";
import type { ServiceModule } from "@kiln/kit/rpc/server";
import { createInProcessTransport } from "@kiln/kit/rpc/transport";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { CatalogService } from "@kiln/proto/catalog";
import { beforeEach, describe, expect, it } from "vitest";
import { createFakeIdentityAuth, createTickingClock, ORG_A, principals } from "../../test/test-catalog.js";
import { createCatalogService } from "../service.js";

const tokens = createInternalTokens("internal-secret-for-catalog-rpc-tests");

let service: ServiceModule;
beforeEach(async () => {
  service = await createCatalogService({
    logger: createLogger({ name: "test", level: "silent" }),
    store: createMemoryStore(),
    bus: createMemoryBus(),
    tokens,
    identityAuth: createFakeIdentityAuth(),
    httpAllowlist: { hosts: parseHostPatterns("api.example.com") },
    now: createTickingClock(),
    importPeers: () => {
      throw new Error("these tests import nothing");
    },
  });
});

/** A client whose calls carry an internal token for `principal`, as the gateway sends them. */
const clientAs = (principal: Principal) =>
  createClient(CatalogService, createInProcessTransport(service, [createForwardInterceptor(tokens, principal)]));

async function connectErrorOf(p: Promise<unknown>): Promise<ConnectError> {
  const error = await p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

/** User JSON with every awkward feature: $ref/$defs, dotted and $-keys, __proto__, integer-like keys, spacing. */
const AWKWARD_SCHEMA =
  '{"type":"object", "properties":{"z":{"$ref":"#/$defs/city"},"a.b":{"type":"string"},"$x":{"type":"number"},' +
  '"__proto__":{"type":"boolean"},"10":{"type":"string"},"2":{"type":"string"}},"$defs":{"city":{"type":"string"}},"required":["z"]}';

describe("CatalogService over Connect", () => {
  it("round-trips free-form JSON byte for byte through tools, prompts and skills", async () => {
    const client = clientAs(principals.userA);
    const config = '{"result":{"__proto__":{"polluted":true},"a.b":1,"$ref":"#/x","b":1,"a":2}}';
    const { tool } = await client.createTool({
      organizationId: ORG_A,
      toolKey: "weather",
      name: "Weather",
      content: { type: "manual_stub", config: { json: config }, inputSchema: { json: AWKWARD_SCHEMA } },
    });
    expect(tool?.content?.config?.json).toBe(config);
    expect(tool?.content?.inputSchema?.json).toBe(AWKWARD_SCHEMA);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const fetched = await client.getTool({ id: tool?.id ?? "" });
    expect(fetched.tool?.content?.config?.json).toBe(config);
    expect(fetched.tool?.content?.inputSchema?.json).toBe(AWKWARD_SCHEMA);

    const { prompt } = await client.createPrompt({
      organizationId: ORG_A,
      name: "Weather",
      defaultModel: "local/echo",
    });
    const responseFormat =
      '{"type":"json_schema","name":"out","schema":{"type":"object","properties":{"a.b":{"type":"string"}}}}';
    const { version } = await client.createPromptVersion({
      promptId: prompt?.id ?? "",
      content: {
        systemPrompt: "City {{z}}",
        variablesSchema: { json: AWKWARD_SCHEMA },
        responseFormat: { json: responseFormat },
      },
      tools: [{ toolId: tool?.id ?? "" }],
    });
    expect(version).toMatchObject({
      version: 1,
      status: "draft",
      content: {
        variablesSchema: { json: AWKWARD_SCHEMA },
        responseFormat: { json: responseFormat },
        model: "local/echo",
      },
      tools: [{ toolId: tool?.id, toolVersionId: tool?.currentVersionId, toolKey: "weather" }],
    });
    expect(version?.content?.developerPrompt).toBeUndefined();
    expect(version?.content?.temperature).toBeUndefined();
    expect(version?.publishedAt).toBeUndefined();
    const published = await client.publishPromptVersion({ promptId: prompt?.id ?? "", versionId: version?.id ?? "" });
    expect(published.prompt?.version?.content?.variablesSchema?.json).toBe(AWKWARD_SCHEMA);

    const { skill } = await client.createSkill({ organizationId: ORG_A, name: "Trip" });
    const variables = '{"z":"{{input.$city}}","a.b":"literal","2":"{{input.two}}"}';
    const replaced = await client.replaceSkillPrompts({
      skillVersionId: skill?.describedVersionId ?? "",
      prompts: [{ promptId: prompt?.id ?? "", variables: { json: variables } }],
    });
    expect(replaced.skill?.content?.promptComposition[0]?.variables?.json).toBe(variables);
    expect(replaced.skill?.content?.outputSchema?.json).toBe(
      '{"type":"object","properties":{"a.b":{"type":"string"}}}',
    );
    const input = JSON.parse(replaced.skill?.content?.inputSchema?.json ?? "{}");
    expect(Object.keys(input.properties)).toEqual(["10", "two", "$city", "$x", "__proto__"]);
    expect(input.properties.$city).toEqual({ type: "string" });
    expect(input.required).toEqual(["$city"]);
  });

  it("converts prompts, versions, timestamps and optional fields", async () => {
    const client = clientAs(principals.userA);
    const { prompt } = await client.createPrompt({ organizationId: ORG_A, name: "P", description: "d" });
    expect(prompt).toMatchObject({
      organizationId: ORG_A,
      name: "P",
      description: "d",
      latestVersion: 0,
      versions: [],
    });
    expect(prompt?.defaultModel).toBeUndefined();
    expect(prompt?.publishedVersionId).toBeUndefined();
    expect(prompt?.version).toBeUndefined();
    expect(timestampDate(prompt?.createdAt ?? timestampFromDate(new Date(0))).toISOString()).toBe(
      "2026-01-01T00:00:01.000Z",
    );
    const { version } = await client.createPromptVersion({
      promptId: prompt?.id ?? "",
      content: { systemPrompt: "Hi", developerPrompt: "", temperature: 0, maxOutputTokens: 10 },
    });
    expect(version?.content).toMatchObject({
      developerPrompt: "",
      temperature: 0,
      maxOutputTokens: 10,
      variablesSchema: { json: '{"type":"object"}' },
    });
    expect(version?.content?.responseFormat?.json).toBe('{"type":"text"}');
    const after = await client.publishPromptVersion({ promptId: prompt?.id ?? "", versionId: version?.id ?? "" });
    expect(after.prompt).toMatchObject({ publishedVersionId: version?.id, latestVersion: 1 });
    expect(after.prompt?.versions).toEqual([
      expect.objectContaining({ id: version?.id, version: 1, status: "published", publishedAt: expect.anything() }),
    ]);
    const list = await client.listPrompts({ organizationId: ORG_A, limit: 10 });
    expect(list.prompts.map((p) => p.id)).toEqual([prompt?.id]);
    expect(list.nextCursor).toBe("");
    const updated = await client.updatePrompt({ id: prompt?.id ?? "", defaultModel: "local/echo" });
    expect(updated.prompt?.defaultModel).toBe("local/echo");
  });

  it("converts tool versions and diffs, with before/after as JSON text and no `from` for version 1", async () => {
    const client = clientAs(principals.userA);
    const { tool } = await client.createTool({
      organizationId: ORG_A,
      toolKey: "fetch",
      name: "Fetch",
      content: {
        type: "http",
        config: { json: '{"url":"https://api.example.com/a","method":"GET"}' },
        inputSchema: { json: '{"type":"object"}' },
      },
    });
    const { version } = await client.createToolVersion({
      toolId: tool?.id ?? "",
      content: { config: { json: '{"url":"https://api.example.com/b","method":"GET","headers":{"a.b":"1"}}' } },
    });
    expect(version).toMatchObject({
      toolId: tool?.id,
      version: 2,
      content: { type: "http", inputSchema: { json: '{"type":"object"}' } },
    });
    const { diff } = await client.diffToolVersions({ toolId: tool?.id ?? "", versionId: version?.id ?? "" });
    expect(diff?.from).toMatchObject({ versionId: tool?.currentVersionId, version: 1 });
    expect(diff?.to).toMatchObject({ versionId: version?.id, version: 2 });
    expect(
      diff?.changes.map((c) => ({ op: c.op, path: c.path, beforeJson: c.before?.json, afterJson: c.after?.json })),
    ).toEqual([
      {
        op: "replace",
        path: "/config/url",
        beforeJson: '"https://api.example.com/a"',
        afterJson: '"https://api.example.com/b"',
      },
      { op: "add", path: "/config/headers", beforeJson: undefined, afterJson: '{"a.b":"1"}' },
    ]);
    expect(diff?.summary).toBe("2 changes: replaced /config/url, added /config/headers");
    const first = await client.diffToolVersions({ toolId: tool?.id ?? "", versionId: tool?.currentVersionId ?? "" });
    expect(first.diff?.from).toBeUndefined();
    const listed = await client.listTools({ organizationId: ORG_A });
    expect(listed.tools[0]).toMatchObject({ id: tool?.id, currentVersionId: version?.id, latestVersion: 2 });
  });

  it("converts skills, skill versions and tools through the whole flow", async () => {
    const client = clientAs(principals.userA);
    const { prompt } = await client.createPrompt({ organizationId: ORG_A, name: "Echo" });
    const { version } = await client.createPromptVersion({
      promptId: prompt?.id ?? "",
      content: { systemPrompt: "Hi" },
    });
    await client.publishPromptVersion({ promptId: prompt?.id ?? "", versionId: version?.id ?? "" });
    const { skill } = await client.createSkill({ organizationId: ORG_A, name: "S" });
    expect(skill).toMatchObject({
      draftVersionId: skill?.describedVersionId,
      content: { inputSchema: { json: '{"type":"object","properties":{}}' } },
    });
    expect(skill?.publishedVersionId).toBeUndefined();
    const draftId = skill?.describedVersionId ?? "";
    await client.replaceSkillPrompts({
      skillVersionId: draftId,
      prompts: [{ promptId: prompt?.id ?? "", alias: "hello" }],
    });
    const published = await client.publishSkillVersion({ skillId: skill?.id ?? "" });
    expect(published.skill).toMatchObject({ publishedVersionId: draftId, describedVersionId: draftId });
    expect(published.skill?.draftVersionId).toBeUndefined();
    expect(published.skill?.content?.promptComposition).toEqual([
      expect.objectContaining({ order: 1, alias: "hello", promptName: "Echo", version: 1 }),
    ]);
    expect(published.skill?.content?.promptComposition[0]?.variables?.json).toBe("{}");
    const next = await client.createSkillVersion({ skillId: skill?.id ?? "" });
    expect(next.version).toMatchObject({ version: 2, status: "draft", skillId: skill?.id, organizationId: ORG_A });
    expect(next.version?.publishedAt).toBeUndefined();
    const { diff } = await client.diffSkillVersions({ skillId: skill?.id ?? "", versionId: next.version?.id ?? "" });
    expect(diff).toMatchObject({ changes: [], summary: "no changes" });
    const got = await client.getSkill({ id: skill?.id ?? "", versionId: draftId });
    expect(got.skill?.versions.map((v) => v.status)).toEqual(["published", "draft"]);
    expect((await client.listSkills({ organizationId: ORG_A })).skills).toHaveLength(1);
    expect((await client.updateSkill({ id: skill?.id ?? "", name: "S2" })).skill?.name).toBe("S2");
    expect(
      (await client.replaceSkillTools({ skillVersionId: next.version?.id ?? "", tools: [] })).skill?.content?.tools,
    ).toEqual([]);
  });

  it("maps domain errors to Connect codes with field details", async () => {
    const client = clientAs(principals.userA);
    const invalid = await connectErrorOf(client.createPrompt({ organizationId: ORG_A, name: "" }));
    expect(invalid.code).toBe(Code.InvalidArgument);
    expect(remoteErrorOf(invalid).details).toEqual([{ field: "name", issue: "is required" }]);

    const tool = {
      organizationId: ORG_A,
      toolKey: "k",
      name: "K",
      content: { type: "manual_stub", config: { json: '{"result":{}}' }, inputSchema: { json: '{"type":"object"}' } },
    };
    await client.createTool(tool);
    expect((await connectErrorOf(client.createTool(tool))).code).toBe(Code.AlreadyExists);

    const { prompt } = await client.createPrompt({ organizationId: ORG_A, name: "P" });
    const { version } = await client.createPromptVersion({
      promptId: prompt?.id ?? "",
      content: { systemPrompt: "x" },
    });
    await client.publishPromptVersion({ promptId: prompt?.id ?? "", versionId: version?.id ?? "" });
    const twice = await connectErrorOf(
      client.publishPromptVersion({ promptId: prompt?.id ?? "", versionId: version?.id ?? "" }),
    );
    expect(twice.code).toBe(Code.FailedPrecondition);

    const foreign = await connectErrorOf(clientAs(principals.userB).getPrompt({ id: prompt?.id ?? "" }));
    expect(foreign.code).toBe(Code.NotFound);
    expect(foreign.rawMessage).toBe("prompt not found");

    const readOnly = await connectErrorOf(
      clientAs(principals.keyAReadOnly).createPrompt({ organizationId: ORG_A, name: "x" }),
    );
    expect(readOnly.code).toBe(Code.PermissionDenied);
    expect((await clientAs(principals.keyAReadOnly).getPrompt({ id: prompt?.id ?? "" })).prompt?.id).toBe(prompt?.id);
    expect((await clientAs(principals.service).getPrompt({ id: prompt?.id ?? "" })).prompt?.id).toBe(prompt?.id);
  });

  it("resolves prompt and skill versions for the execution service, forwarding the run's principal", async () => {
    const author = clientAs(principals.userA);
    const config = '{"result":{"__proto__":{"p":1},"a.b":1,"$ref":"#/x","b":1, "a":2}}';
    const { tool } = await author.createTool({
      organizationId: ORG_A,
      toolKey: "weather",
      name: "Weather",
      description: "Forecasts",
      content: { type: "manual_stub", config: { json: config }, inputSchema: { json: AWKWARD_SCHEMA } },
    });
    const { prompt } = await author.createPrompt({
      organizationId: ORG_A,
      name: "Weather",
      defaultModel: "local/echo",
    });
    const promptId = prompt?.id ?? "";
    const runner = clientAs(principals.keyARunner);
    const nothing = await connectErrorOf(runner.resolvePromptVersion({ organizationId: ORG_A, promptId }));
    expect(nothing.code).toBe(Code.FailedPrecondition);
    expect(nothing.rawMessage).toBe("prompt has no published version");
    const { version } = await author.createPromptVersion({
      promptId,
      content: { systemPrompt: "City {{z}}", variablesSchema: { json: AWKWARD_SCHEMA } },
      tools: [{ toolId: tool?.id ?? "" }],
    });
    await author.publishPromptVersion({ promptId, versionId: version?.id ?? "" });

    const resolved = (await runner.resolvePromptVersion({ organizationId: ORG_A, promptId })).prompt;
    expect(resolved?.promptName).toBe("Weather");
    expect(resolved?.version).toMatchObject({
      id: version?.id,
      status: "published",
      content: { systemPrompt: "City {{z}}", variablesSchema: { json: AWKWARD_SCHEMA }, model: "local/echo" },
      tools: [{ toolId: tool?.id, toolVersionId: tool?.currentVersionId, toolKey: "weather" }],
    });
    expect(resolved?.version?.publishedAt).toBeDefined();
    expect(resolved?.tools.map((t) => ({ ...t }))).toEqual([
      expect.objectContaining({
        toolId: tool?.id,
        toolVersionId: tool?.currentVersionId,
        toolKey: "weather",
        description: "Forecasts",
        content: expect.objectContaining({
          type: "manual_stub",
          config: expect.objectContaining({ json: config }),
          inputSchema: expect.objectContaining({ json: AWKWARD_SCHEMA }),
        }),
      }),
    ]);

    const { skill } = await author.createSkill({ organizationId: ORG_A, name: "Trip" });
    const variables = '{"z":"{{input.city}}"}';
    await author.replaceSkillPrompts({
      skillVersionId: skill?.describedVersionId ?? "",
      prompts: [{ promptId, alias: "forecast", variables: { json: variables } }],
    });
    const preview = await runner.resolveSkillVersion({ organizationId: ORG_A, skillId: skill?.id, preferDraft: true });
    expect(preview.version).toMatchObject({ id: skill?.describedVersionId, status: "draft" });
    expect(preview.version?.publishedAt).toBeUndefined();
    expect((await connectErrorOf(runner.resolveSkillVersion({ organizationId: ORG_A, skillId: skill?.id }))).code).toBe(
      Code.FailedPrecondition,
    );
    await author.publishSkillVersion({ skillId: skill?.id ?? "" });
    const run = await runner.resolveSkillVersion({ organizationId: ORG_A, skillId: skill?.id });
    expect(run.version).toMatchObject({ id: skill?.describedVersionId, status: "published", skillId: skill?.id });
    expect(run.steps).toHaveLength(1);
    expect(run.steps[0]?.step).toMatchObject({
      order: 1,
      alias: "forecast",
      promptId,
      promptVersionId: version?.id,
      variables: { json: variables },
    });
    expect(run.steps[0]?.prompt?.version?.id).toBe(version?.id);
    expect(run.steps[0]?.prompt?.tools[0]?.content?.config?.json).toBe(config);
    expect(run.tools).toEqual([]);

    const foreign = await connectErrorOf(
      clientAs(principals.keyBRunner).resolvePromptVersion({ organizationId: ORG_A, promptId }),
    );
    expect(foreign.code).toBe(Code.NotFound);
    expect(foreign.rawMessage).toBe("prompt not found");
    const noScope = await connectErrorOf(
      clientAs(principals.keyA).resolveSkillVersion({ organizationId: ORG_A, skillId: skill?.id }),
    );
    expect(noScope.code).toBe(Code.PermissionDenied);
  });

  it("authors and resolves agents: workflow JSON text, validation issues, pinned refs", async () => {
    const client = clientAs(principals.userA);
    const { prompt } = await client.createPrompt({ organizationId: ORG_A, name: "P" });
    const { version } = await client.createPromptVersion({
      promptId: prompt?.id ?? "",
      content: { systemPrompt: "Hi" },
    });
    await client.publishPromptVersion({ promptId: prompt?.id ?? "", versionId: version?.id ?? "" });
    const { agent } = await client.createAgent({ organizationId: ORG_A, name: "Agent" });
    expect(agent).toMatchObject({ workflow: { json: "{}" }, draftVersionId: agent?.describedVersionId });
    expect(agent?.publishedVersionId).toBeUndefined();
    const draftId = agent?.draftVersionId ?? "";
    const workflowJson =
      '{"inputSchema":{"type":"object"},"entry":"a",' +
      `"steps":[{"id":"a","type":"prompt","ref":{"promptId":"${prompt?.id}"}}],"output":"{{steps.a.output}}"}`;
    const saved = await client.saveAgentWorkflow({ agentVersionId: draftId, workflow: { json: workflowJson } });
    expect(saved.version?.workflow?.json).toBe(workflowJson);
    const invalid = await client.validateAgentWorkflow({
      agentVersionId: draftId,
      workflow: { json: '{"entry":"x"}' },
    });
    expect(invalid.valid).toBe(false);
    expect(invalid.errors.map((e) => `${e.path} ${e.code}`)).toContain("steps required");
    expect((await client.validateAgentWorkflow({ agentVersionId: draftId })).valid).toBe(true);
    const published = await client.publishAgentVersion({ agentId: agent?.id ?? "", versionId: "" });
    expect(published.agent?.publishedVersionId).toBe(draftId);
    expect(JSON.parse(published.agent?.workflow?.json ?? "").steps[0].ref.promptVersionId).toBe(version?.id);
    const diff = await client.diffAgentVersions({ agentId: agent?.id ?? "", versionId: draftId });
    expect(diff.diff?.from).toBeUndefined();
    const rolled = await client.rollbackAgentVersion({ agentId: agent?.id ?? "", versionId: draftId });
    expect(rolled.agent?.versions.map((v) => v.status)).toEqual(["published", "published"]);
    const list = await client.listAgents({ organizationId: ORG_A });
    expect(list.agents).toHaveLength(1);

    const resolved = await clientAs(principals.keyARunner).resolveAgentVersion({
      organizationId: ORG_A,
      agentId: agent?.id ?? "",
    });
    expect(resolved.version?.status).toBe("published");
    expect(resolved.steps[0]?.stepId).toBe("a");
    expect(resolved.steps[0]?.prompt?.version?.id).toBe(version?.id);
    const e = await connectErrorOf(
      client.saveAgentWorkflow({ agentVersionId: draftId, workflow: { json: workflowJson } }),
    );
    expect(e.code).toBe(Code.FailedPrecondition);
    const hidden = await connectErrorOf(clientAs(principals.userB).getAgent({ id: agent?.id ?? "" }));
    expect(hidden.code).toBe(Code.NotFound);
  });

  it("names content fields as the REST body does, and copies a tool version's unset content fields", async () => {
    const client = clientAs(principals.userA);
    const { prompt } = await client.createPrompt({ organizationId: ORG_A, name: "P" });
    const invalid = await connectErrorOf(
      client.createPromptVersion({
        promptId: prompt?.id ?? "",
        content: {
          systemPrompt: "{{city}}",
          variablesSchema: { json: '{"type":"object","properties":{"city":{"type":"strin"}}}' },
          responseFormat: { json: '{"type":"xml"}' },
        },
      }),
    );
    expect(invalid.code).toBe(Code.InvalidArgument);
    expect(remoteErrorOf(invalid).details.map((d) => d.field)).toEqual([
      "variablesSchema.properties.city.type",
      "responseFormat.type",
    ]);

    const config = '{"result":{"b":1,"a":2}}';
    const { tool } = await client.createTool({
      organizationId: ORG_A,
      toolKey: "copy",
      name: "Copy",
      content: { type: "manual_stub", config: { json: config }, inputSchema: { json: AWKWARD_SCHEMA } },
    });
    const missing = await connectErrorOf(
      client.createTool({ organizationId: ORG_A, toolKey: "none", name: "None", content: { type: "manual_stub" } }),
    );
    expect(remoteErrorOf(missing).details).toEqual([
      { field: "config", issue: "is required" },
      { field: "inputSchema", issue: "is required" },
    ]);
    const copied = await client.createToolVersion({ toolId: tool?.id ?? "" });
    expect(copied.version?.version).toBe(2);
    expect(copied.version?.content).toMatchObject({
      type: "manual_stub",
      config: { json: config },
      inputSchema: { json: AWKWARD_SCHEMA },
    });
  });

  it("refuses calls without credentials", async () => {
    const none: Interceptor = (next) => (req) => next(req);
    const client = createClient(CatalogService, createInProcessTransport(service, [none]));
    expect((await connectErrorOf(client.listPrompts({ organizationId: ORG_A }))).code).toBe(Code.Unauthenticated);
  });
});
