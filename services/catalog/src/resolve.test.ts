import type { Principal } from "@kiln/kit/principal";
import type { Collection, Doc, Store } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { beforeEach, describe, expect, it } from "vitest";
import { createTestCatalog, ORG_A, ORG_B, ORG_NO_AI, principals, rejectionOf } from "../test/test-catalog.js";
import type { ResolvedToolView } from "./resolve.js";

const { userA, userB, userNoAiPermission, keyA, keyAReadOnly, keyARunner, keyBRunner } = principals;

/** A memory store that records every collection call as `collection.method`. */
function countingStore(): { store: Store; calls: string[] } {
  const inner = createMemoryStore();
  const calls: string[] = [];
  const store: Store = {
    collection<T extends Doc>(name: string): Collection<T> {
      const collection = inner.collection<T>(name);
      return new Proxy(collection, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            calls.push(`${name}.${String(property)}`);
            return value.apply(target, args);
          };
        },
      });
    },
    ensureIndexes: (name, indexes) => inner.ensureIndexes(name, indexes),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return { store, calls };
}

let counting: ReturnType<typeof countingStore>;
let catalog: Awaited<ReturnType<typeof createTestCatalog>>;
beforeEach(async () => {
  counting = countingStore();
  catalog = await createTestCatalog({ store: counting.store });
});

/** The store calls `run` makes. */
async function callsOf(run: () => Promise<unknown>): Promise<string[]> {
  const from = counting.calls.length;
  await run();
  return counting.calls.slice(from).sort();
}

/** Tool JSON with every awkward feature, to be handed back byte for byte. */
const CONFIG = '{"result":{"__proto__":{"x":1},"a.b":1,"$ref":"#/x", "z":1,"a":2,"10":3}}';
const SCHEMA = '{"type":"object", "properties":{"$x":{"type":"number"},"a.b":{"type":"string"}}}';

async function newTool(toolKey: string, organizationId = ORG_A, principal: Principal = userA) {
  const view = await catalog.tools.createTool(principal, {
    organizationId,
    toolKey,
    name: toolKey,
    description: `${toolKey} tool`,
    type: "manual_stub",
    configJson: CONFIG,
    inputSchemaJson: SCHEMA,
  });
  return view.tool._id;
}

async function newPrompt(name = "Weather", organizationId = ORG_A, principal: Principal = userA) {
  const view = await catalog.prompts.createPrompt(principal, { organizationId, name, description: "" });
  return view.prompt._id;
}

async function newVersion(
  promptId: string,
  tools: { toolId: string }[] = [],
  systemPrompt = "Hi",
  variablesSchemaJson?: string,
) {
  return catalog.prompts.createPromptVersion(userA, { promptId, systemPrompt, tools, variablesSchemaJson });
}

async function publish(promptId: string, versionId: string) {
  await catalog.prompts.publishPromptVersion(userA, { promptId, versionId });
}

const resolvePrompt = (principal: Principal, promptId: string, versionId = "", organizationId: string = ORG_A) =>
  catalog.resolver.resolvePromptVersion(principal, { organizationId, promptId, versionId });

const resolveSkill = (
  principal: Principal,
  skillId: string,
  options: { versionId?: string; preferDraft?: boolean; organizationId?: string } = {},
) =>
  catalog.resolver.resolveSkillVersion(principal, {
    organizationId: options.organizationId ?? ORG_A,
    skillId,
    versionId: options.versionId ?? "",
    preferDraft: options.preferDraft ?? false,
  });

const toolSummary = (t: ResolvedToolView) => ({
  toolId: t.pin.toolId,
  toolVersionId: t.pin.toolVersionId,
  toolKey: t.pin.toolKey,
  description: t.description,
  type: t.version.type,
  config: t.version.config,
  inputSchema: t.version.inputSchema,
});

describe("resolvePromptVersion", () => {
  it("resolves the live published version with its tools at their pinned versions, JSON text unchanged", async () => {
    const toolId = await newTool("weather");
    const promptId = await newPrompt();
    const v1 = await newVersion(promptId, [{ toolId }], "One");
    await publish(promptId, v1._id);
    // Changed after pinning: the new tool version is not what v1 runs; the description is current.
    await catalog.tools.createToolVersion(userA, { toolId, configJson: '{"result":{"v":2}}' });
    await catalog.tools.updateTool(userA, { id: toolId, description: "Current description" });
    await catalog.prompts.updatePrompt(userA, { id: promptId, name: "Renamed", clearDefaultModel: false });
    await newVersion(promptId, [], "Draft two");

    const resolved = await resolvePrompt(userA, promptId);
    expect(resolved.version).toMatchObject({ _id: v1._id, version: 1, status: "published", systemPrompt: "One" });
    expect(resolved.promptName).toBe("Renamed");
    expect(resolved.tools.map(toolSummary)).toEqual([
      {
        toolId,
        toolVersionId: v1.tools[0]?.toolVersionId,
        toolKey: "weather",
        description: "Current description",
        type: "manual_stub",
        config: CONFIG,
        inputSchema: SCHEMA,
      },
    ]);
    expect(catalog.identityAuth.calls.at(-1)).toEqual({
      principal: userA,
      input: { organizationId: ORG_A, requireAi: true, scope: "runs:write" },
    });
  });

  it("follows the live published version and runs any version by explicit versionId, drafts included", async () => {
    const promptId = await newPrompt();
    const v1 = await newVersion(promptId, [], "One");
    const v2 = await newVersion(promptId, [], "Two");
    await publish(promptId, v1._id);
    expect((await resolvePrompt(userA, promptId)).version._id).toBe(v1._id);
    // The draft, by id: read afresh each time, so publishing it shows at once.
    expect((await resolvePrompt(userA, promptId, v2._id)).version).toMatchObject({ _id: v2._id, status: "draft" });
    await publish(promptId, v2._id);
    expect((await resolvePrompt(userA, promptId)).version._id).toBe(v2._id);
    expect((await resolvePrompt(userA, promptId, v2._id)).version).toMatchObject({ status: "published" });
    // An older published version stays runnable by id.
    expect((await resolvePrompt(userA, promptId, v1._id)).version._id).toBe(v1._id);
  });

  it("refuses a prompt with nothing published (failed_precondition) and unknown versions (not_found)", async () => {
    const promptId = await newPrompt();
    const draft = await newVersion(promptId);
    const none = await rejectionOf(resolvePrompt(userA, promptId));
    expect(none.kind).toBe("failed_precondition");
    expect(none.message).toBe("prompt has no published version");

    const otherPromptVersion = await newVersion(await newPrompt("Other"));
    for (const versionId of ["pv_missing", otherPromptVersion._id]) {
      const error = await rejectionOf(resolvePrompt(userA, promptId, versionId));
      expect(error).toMatchObject({ kind: "not_found", message: "prompt version not found" });
    }
    expect((await resolvePrompt(userA, promptId, draft._id)).version._id).toBe(draft._id);
  });

  it("answers not_found, with the message of a missing prompt, outside the named organization", async () => {
    const promptId = await newPrompt();
    await publish(promptId, (await newVersion(promptId))._id);
    const cases: [Principal, string, string][] = [
      [userA, "prm_missing", ORG_A],
      [userB, promptId, ORG_B], // the prompt is not of the organization named
      [userB, promptId, ORG_A], // not a member of the organization named
      [keyBRunner, promptId, ORG_A], // a key of another organization
      [keyBRunner, promptId, ORG_B],
      [userA, promptId, "org_unknown"],
    ];
    for (const [principal, id, organizationId] of cases) {
      const error = await rejectionOf(resolvePrompt(principal, id, "", organizationId));
      expect(error).toMatchObject({ kind: "not_found", message: "prompt not found" });
    }
  });

  it("needs runs:write from a key (and nothing else), and the AI permission from a user", async () => {
    const promptId = await newPrompt();
    await publish(promptId, (await newVersion(promptId))._id);
    for (const principal of [keyA, keyAReadOnly, userNoAiPermission]) {
      expect((await rejectionOf(resolvePrompt(principal, promptId))).kind).toBe("permission_denied");
    }
    // A key without runs:write is refused even for a prompt that does not exist.
    expect((await rejectionOf(resolvePrompt(keyA, "prm_missing"))).kind).toBe("permission_denied");
    expect((await resolvePrompt(keyARunner, promptId)).version.promptId).toBe(promptId);
    expect(catalog.identityAuth.calls.at(-1)?.input).toEqual({
      organizationId: ORG_A,
      requireAi: true,
      scope: "runs:write",
    });
  });

  it("refuses a missing organization or prompt id", async () => {
    const error = await rejectionOf(
      catalog.resolver.resolvePromptVersion(userA, { organizationId: "", promptId: "", versionId: "" }),
    );
    expect(error.kind).toBe("invalid_argument");
    expect(error.details).toEqual([
      { field: "organizationId", issue: "is required" },
      { field: "promptId", issue: "is required" },
    ]);
  });

  it("reads each collection at most once, and immutable versions only once per process", async () => {
    const tools = [await newTool("a"), await newTool("b"), await newTool("c")];
    const promptId = await newPrompt();
    const version = await newVersion(
      promptId,
      tools.map((toolId) => ({ toolId })),
    );
    await publish(promptId, version._id);
    expect(await callsOf(() => resolvePrompt(userA, promptId))).toEqual([
      "prompt_versions.find",
      "prompts.findOne",
      "tool_versions.find",
      "tools.find",
    ]);
    // The published version and its tool versions are cached; which version is live is not.
    expect(await callsOf(() => resolvePrompt(userA, promptId))).toEqual([
      "prompt_versions.find",
      "prompts.findOne",
      "tools.find",
    ]);
    expect(await callsOf(() => resolvePrompt(userA, promptId, version._id))).toEqual(["prompts.findOne", "tools.find"]);
    expect(catalog.versionCache.size).toBe(4);
  });

  it("refuses a version whose pinned tool version no longer exists, with the field in the details", async () => {
    const toolId = await newTool("gone");
    const promptId = await newPrompt();
    const version = await newVersion(promptId, [{ toolId }]);
    await publish(promptId, version._id);
    await catalog.collections.toolVersions.deleteOne({ _id: version.tools[0]?.toolVersionId ?? "" });
    const error = await rejectionOf(resolvePrompt(userA, promptId));
    expect(error.kind).toBe("failed_precondition");
    expect(error.details).toEqual([
      { field: "tools[0].toolVersionId", issue: `tool version ${version.tools[0]?.toolVersionId} no longer exists` },
    ]);
  });
});

describe("resolveSkillVersion", () => {
  /** A published skill version 1 of two steps (the first with a prompt tool) and one skill tool. */
  async function publishedSkill() {
    const promptToolId = await newTool("lookup");
    const skillToolId = await newTool("notify");
    const first = await newPrompt("First");
    const firstVersion = await newVersion(first, [{ toolId: promptToolId }], "One");
    await publish(first, firstVersion._id);
    const second = await newPrompt("Second");
    const secondVersion = await newVersion(
      second,
      [],
      "Two {{x}}",
      '{"type":"object","properties":{"x":{"type":"string"}}}',
    );
    await publish(second, secondVersion._id);
    const created = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "Trip", description: "" });
    const skillId = created.skill._id;
    const v1 = created.described._id;
    await catalog.skills.replaceSkillPrompts(userA, {
      skillVersionId: v1,
      prompts: [
        { promptId: first, alias: "look" },
        { promptId: second, alias: "tell", variablesJson: '{"x":"{{steps.look.output}}"}' },
      ],
    });
    await catalog.skills.replaceSkillTools(userA, { skillVersionId: v1, tools: [{ toolId: skillToolId }] });
    await catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    return { skillId, v1, first, firstVersion, second, secondVersion, promptToolId, skillToolId };
  }

  /** A new draft version 2 composed of the second prompt only. */
  async function newDraft(skillId: string, promptId: string) {
    const draft = await catalog.skills.createSkillVersion(userA, { skillId, fromVersionId: "" });
    await catalog.skills.replaceSkillPrompts(userA, { skillVersionId: draft._id, prompts: [{ promptId }] });
    return draft._id;
  }

  it("resolves the published version with every step's prompt version and all tools", async () => {
    const s = await publishedSkill();
    await newDraft(s.skillId, s.second);
    const resolved = await resolveSkill(userA, s.skillId);
    expect(resolved.version).toMatchObject({ _id: s.v1, version: 1, status: "published" });
    expect(resolved.steps.map((x) => x.step)).toEqual([
      expect.objectContaining({ order: 1, alias: "look", promptId: s.first, promptVersionId: s.firstVersion._id }),
      expect.objectContaining({ order: 2, alias: "tell", variables: '{"x":"{{steps.look.output}}"}' }),
    ]);
    const [look, tell] = resolved.steps.map((x) => x.prompt);
    expect(look).toMatchObject({ promptName: "First", version: { _id: s.firstVersion._id, systemPrompt: "One" } });
    expect(look?.tools.map(toolSummary)).toEqual([
      {
        toolId: s.promptToolId,
        toolVersionId: s.firstVersion.tools[0]?.toolVersionId,
        toolKey: "lookup",
        description: "lookup tool",
        type: "manual_stub",
        config: CONFIG,
        inputSchema: SCHEMA,
      },
    ]);
    expect(tell).toMatchObject({ promptName: "Second", tools: [], version: { _id: s.secondVersion._id } });
    expect(resolved.tools.map(toolSummary)).toEqual([
      expect.objectContaining({ toolId: s.skillToolId, toolKey: "notify", config: CONFIG, inputSchema: SCHEMA }),
    ]);
    expect(catalog.identityAuth.calls.at(-1)).toEqual({
      principal: userA,
      input: { organizationId: ORG_A, requireAi: true, scope: "runs:write" },
    });
  });

  it("takes the draft with preferDraft, else the published version, and any version by versionId", async () => {
    const s = await publishedSkill();
    expect((await resolveSkill(userA, s.skillId, { preferDraft: true })).version._id).toBe(s.v1);
    const draft = await newDraft(s.skillId, s.second);
    const preview = await resolveSkill(userA, s.skillId, { preferDraft: true });
    expect(preview.version).toMatchObject({ _id: draft, status: "draft" });
    expect(preview.steps.map((x) => x.prompt.version._id)).toEqual([s.secondVersion._id]);
    // Drafts are read afresh: a change to the composition shows at once.
    await catalog.skills.replaceSkillPrompts(userA, { skillVersionId: draft, prompts: [{ promptId: s.first }] });
    const changed = await resolveSkill(userA, s.skillId, { versionId: draft });
    expect(changed.steps.map((x) => x.prompt.version._id)).toEqual([s.firstVersion._id]);
    expect((await resolveSkill(userA, s.skillId, { versionId: s.v1 })).version._id).toBe(s.v1);
    expect((await resolveSkill(userA, s.skillId)).version._id).toBe(s.v1);
  });

  it("refuses a skill with nothing published (failed_precondition) and unknown versions (not_found)", async () => {
    const created = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "New", description: "" });
    const skillId = created.skill._id;
    const none = await rejectionOf(resolveSkill(userA, skillId));
    expect(none).toMatchObject({ kind: "failed_precondition", message: "skill has no published version" });
    // The preview of a new skill: its empty draft.
    const preview = await resolveSkill(userA, skillId, { preferDraft: true });
    expect(preview).toMatchObject({ version: { _id: created.described._id }, steps: [], tools: [] });

    const other = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "O", description: "" });
    for (const versionId of ["sv_missing", other.described._id]) {
      const error = await rejectionOf(resolveSkill(userA, skillId, { versionId }));
      expect(error).toMatchObject({ kind: "not_found", message: "skill version not found" });
    }
  });

  it("answers not_found outside the named organization and needs runs:write from a key", async () => {
    const s = await publishedSkill();
    const cases: [Principal, string, string][] = [
      [userA, "skl_missing", ORG_A],
      [userB, s.skillId, ORG_B],
      [userB, s.skillId, ORG_A],
      [keyBRunner, s.skillId, ORG_A],
      [keyBRunner, s.skillId, ORG_B],
    ];
    for (const [principal, id, organizationId] of cases) {
      const error = await rejectionOf(resolveSkill(principal, id, { organizationId }));
      expect(error).toMatchObject({ kind: "not_found", message: "skill not found" });
    }
    for (const principal of [keyA, keyAReadOnly, userNoAiPermission]) {
      expect((await rejectionOf(resolveSkill(principal, s.skillId))).kind).toBe("permission_denied");
    }
    // A member of an organization without AI is refused before anything is looked up there.
    expect((await rejectionOf(resolveSkill(userA, s.skillId, { organizationId: ORG_NO_AI }))).kind).toBe(
      "permission_denied",
    );
    expect((await resolveSkill(keyARunner, s.skillId)).version._id).toBe(s.v1);
  });

  it("refuses a composition that no longer resolves, naming every offending field", async () => {
    const s = await publishedSkill();
    await catalog.collections.promptVersions.deleteOne({ _id: s.secondVersion._id });
    await catalog.collections.toolVersions.deleteOne({ _id: s.firstVersion.tools[0]?.toolVersionId ?? "" });
    const error = await rejectionOf(resolveSkill(userA, s.skillId));
    expect(error.kind).toBe("failed_precondition");
    expect(error.message).toBe("skill version 1 does not resolve: something it pins no longer exists");
    expect(error.details).toEqual([
      {
        field: "promptComposition[0].tools[0].toolVersionId",
        issue: `tool version ${s.firstVersion.tools[0]?.toolVersionId} no longer exists`,
      },
      {
        field: "promptComposition[1].promptVersionId",
        issue: `prompt version ${s.secondVersion._id} no longer exists`,
      },
    ]);
  });

  it("reads each collection at most once, whatever the number of steps and tools", async () => {
    const s = await publishedSkill();
    const expected = [
      "prompt_versions.find",
      "prompts.find",
      "skill_versions.find",
      "skills.findOne",
      "tool_versions.find",
      "tools.find",
    ];
    expect(await callsOf(() => resolveSkill(userA, s.skillId))).toEqual(expected);
    // Published skill, prompt and tool versions come from the cache; the live version is read.
    expect(await callsOf(() => resolveSkill(userA, s.skillId))).toEqual([
      "prompts.find",
      "skill_versions.find",
      "skills.findOne",
      "tools.find",
    ]);
    expect(await callsOf(() => resolveSkill(userA, s.skillId, { versionId: s.v1 }))).toEqual([
      "prompts.find",
      "skills.findOne",
      "tools.find",
    ]);
    // A draft is never cached.
    const draft = await newDraft(s.skillId, s.second);
    for (let i = 0; i < 2; i++) {
      expect(await callsOf(() => resolveSkill(userA, s.skillId, { versionId: draft }))).toEqual([
        "prompts.find",
        "skill_versions.find",
        "skills.findOne",
        "tools.find",
      ]);
    }
  });
});

describe("the live-version cache", () => {
  /** Two catalog replicas on one store, each with its own cache, and a clock the test moves. */
  async function replicas() {
    const clock = { ms: Date.parse("2026-11-23T12:00:00.000Z") };
    const now = () => new Date(clock.ms);
    const a = await createTestCatalog({ store: counting.store, now, resolveCacheTtlMs: 1_000 });
    const b = await createTestCatalog({ store: counting.store, now, resolveCacheTtlMs: 1_000 });
    const live = (replica: typeof a, promptId: string) =>
      replica.resolver.resolvePromptVersion(userA, { organizationId: ORG_A, promptId, versionId: "" });
    return { clock, a, b, live };
  }

  it("resolves a prompt's live version again without reading the store, and a named version as before", async () => {
    const { a, live } = await replicas();
    const { prompt } = await a.prompts.createPrompt(userA, { organizationId: ORG_A, name: "P", description: "" });
    const v1 = await a.prompts.createPromptVersion(userA, { promptId: prompt._id, systemPrompt: "One", tools: [] });
    await a.prompts.publishPromptVersion(userA, { promptId: prompt._id, versionId: v1._id });
    expect(await callsOf(() => live(a, prompt._id))).toEqual(["prompt_versions.find", "prompts.findOne"]);
    expect(await callsOf(() => live(a, prompt._id))).toEqual([]);
    // A version named by id still reads the prompt (its name and organization).
    const named = () =>
      a.resolver.resolvePromptVersion(userA, { organizationId: ORG_A, promptId: prompt._id, versionId: v1._id });
    expect(await callsOf(named)).toEqual(["prompts.findOne"]);
    // Still checked: the cache never answers for another organization.
    expect(
      (
        await rejectionOf(
          a.resolver.resolvePromptVersion(userB, { organizationId: ORG_B, promptId: prompt._id, versionId: "" }),
        )
      ).kind,
    ).toBe("not_found");
  });

  it("runs what this replica published at once, and what another replica published within the TTL", async () => {
    const { clock, a, b, live } = await replicas();
    const { prompt } = await a.prompts.createPrompt(userA, { organizationId: ORG_A, name: "P", description: "" });
    const v1 = await a.prompts.createPromptVersion(userA, { promptId: prompt._id, systemPrompt: "One", tools: [] });
    await a.prompts.publishPromptVersion(userA, { promptId: prompt._id, versionId: v1._id });
    expect((await live(a, prompt._id)).version._id).toBe(v1._id);
    expect((await live(b, prompt._id)).version._id).toBe(v1._id);

    const v2 = await a.prompts.createPromptVersion(userA, { promptId: prompt._id, systemPrompt: "Two", tools: [] });
    await a.prompts.publishPromptVersion(userA, { promptId: prompt._id, versionId: v2._id });
    await a.prompts.updatePrompt(userA, { id: prompt._id, name: "Renamed", clearDefaultModel: false });
    expect(await live(a, prompt._id)).toMatchObject({ version: { _id: v2._id }, promptName: "Renamed" });
    // The other replica may run version 1 until its entry is 1 s old, not longer.
    clock.ms += 999;
    expect((await live(b, prompt._id)).version._id).toBe(v1._id);
    clock.ms += 1;
    expect(await live(b, prompt._id)).toMatchObject({ version: { _id: v2._id }, promptName: "Renamed" });
  });

  it("caches a skill's live version for runs, never the draft a preview runs, and forgets it on publish", async () => {
    const { a } = await replicas();
    const { prompt } = await a.prompts.createPrompt(userA, { organizationId: ORG_A, name: "P", description: "" });
    const pv = await a.prompts.createPromptVersion(userA, { promptId: prompt._id, systemPrompt: "One", tools: [] });
    await a.prompts.publishPromptVersion(userA, { promptId: prompt._id, versionId: pv._id });
    const created = await a.skills.createSkill(userA, { organizationId: ORG_A, name: "S", description: "" });
    const skillId = created.skill._id;
    await a.skills.replaceSkillPrompts(userA, {
      skillVersionId: created.described._id,
      prompts: [{ promptId: prompt._id }],
    });
    await a.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    const run = () =>
      a.resolver.resolveSkillVersion(userA, { organizationId: ORG_A, skillId, versionId: "", preferDraft: false });
    const preview = () =>
      a.resolver.resolveSkillVersion(userA, { organizationId: ORG_A, skillId, versionId: "", preferDraft: true });
    expect((await run()).version._id).toBe(created.described._id);
    expect(await callsOf(run)).not.toContain("skill_versions.find");
    expect(await callsOf(run)).not.toContain("skills.findOne");

    const draft = await a.skills.createSkillVersion(userA, { skillId, fromVersionId: "" });
    expect((await preview()).version._id).toBe(draft._id);
    expect(await callsOf(preview)).toContain("skill_versions.findOne");
    await a.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    expect((await run()).version._id).toBe(draft._id);
  });
});
