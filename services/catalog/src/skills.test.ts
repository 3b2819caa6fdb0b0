import type { Principal } from "@kiln/kit/principal";
import { beforeEach, describe, expect, it } from "vitest";
import { createTestCatalog, ORG_A, ORG_B, principals, rejectionOf, snapshotOf } from "../test/test-catalog.js";
import type { PromptSelector } from "./skills.js";

const { userA, userB, keyAReadOnly } = principals;

let catalog: Awaited<ReturnType<typeof createTestCatalog>>;
beforeEach(async () => {
  catalog = await createTestCatalog();
});

async function newTool(toolKey: string, organizationId = ORG_A, principal: Principal = userA) {
  return catalog.tools.createTool(principal, {
    organizationId,
    toolKey,
    name: toolKey,
    description: "",
    type: "manual_stub",
    configJson: '{"result":{}}',
    inputSchemaJson: '{"type":"object"}',
  });
}

/** A prompt with one version (published unless asked otherwise). */
async function newPrompt(
  options: {
    name?: string;
    variablesSchemaJson?: string;
    responseFormatJson?: string;
    systemPrompt?: string;
    publish?: boolean;
    organizationId?: string;
    principal?: Principal;
    tools?: { toolId: string; toolVersionId?: string }[];
  } = {},
) {
  const principal = options.principal ?? userA;
  const { prompt } = await catalog.prompts.createPrompt(principal, {
    organizationId: options.organizationId ?? ORG_A,
    name: options.name ?? "Weather",
    description: "",
  });
  const version = await catalog.prompts.createPromptVersion(principal, {
    promptId: prompt._id,
    systemPrompt: options.systemPrompt ?? "Weather in {{city}}",
    variablesSchemaJson:
      options.variablesSchemaJson ??
      '{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}',
    responseFormatJson: options.responseFormatJson,
    tools: options.tools ?? [],
  });
  if (options.publish !== false) {
    await catalog.prompts.publishPromptVersion(principal, { promptId: prompt._id, versionId: version._id });
  }
  return { promptId: prompt._id, versionId: version._id };
}

const SUMMARY_FORMAT =
  '{"type":"json_schema","name":"summary","schema":{"type":"object","properties":{"text":{"type":"string"}}}}';

async function newSkill(principal: Principal = userA, organizationId = ORG_A) {
  const view = await catalog.skills.createSkill(principal, { organizationId, name: "Trip", description: "" });
  return { skillId: view.skill._id, draftId: view.described._id };
}

/** A skill whose draft composes a weather step and a poem step bound to it. */
async function composedSkill() {
  const weather = await newPrompt({ responseFormatJson: SUMMARY_FORMAT });
  const poem = await newPrompt({
    name: "Poem",
    systemPrompt: "A {{tone}} poem about {{topic}}",
    variablesSchemaJson:
      '{"type":"object","properties":{"topic":{"type":"string"},"tone":{"type":"string"}},"required":["topic"]}',
  });
  const { skillId, draftId } = await newSkill();
  const prompts: PromptSelector[] = [
    { promptId: weather.promptId, alias: "weather" },
    { promptId: poem.promptId, variablesJson: '{"topic":"{{steps.weather.output.text}}","tone":"calm"}' },
  ];
  const view = await catalog.skills.replaceSkillPrompts(userA, { skillVersionId: draftId, prompts });
  return { skillId, draftId, weather, poem, view };
}

describe("createSkill", () => {
  it("creates a skill with an empty draft version 1", async () => {
    const view = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "Trip", description: "Plans" });
    expect(view.skill).toMatchObject({ organizationId: ORG_A, name: "Trip", description: "Plans" });
    expect(view.skill._id).toMatch(/^skl_/);
    expect(view.described).toMatchObject({ version: 1, status: "draft", promptComposition: [], tools: [] });
    expect(view.described._id).toMatch(/^sv_/);
    expect(view.draftVersionId).toBe(view.described._id);
    expect(view.publishedVersionId).toBeNull();
    expect(view.described.inputSchema).toBe('{"type":"object","properties":{}}');
    expect(view.described.outputSchema).toBe('{"type":"string"}');
    expect(catalog.identityAuth.calls.at(-1)?.input.scope).toBe("skills:write");
  });

  it("refuses bad input, foreign organizations and read-only keys, storing nothing", async () => {
    expect(
      (await rejectionOf(catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "", description: "" })))
        .details,
    ).toEqual([{ field: "name", issue: "is required" }]);
    expect(
      (await rejectionOf(catalog.skills.createSkill(userA, { organizationId: ORG_B, name: "x", description: "" })))
        .kind,
    ).toBe("not_found");
    expect(
      (
        await rejectionOf(
          catalog.skills.createSkill(keyAReadOnly, { organizationId: ORG_A, name: "x", description: "" }),
        )
      ).kind,
    ).toBe("permission_denied");
    expect(await snapshotOf(catalog.collections)).toMatchObject({ skills: [], skillVersions: [], skillDraftSlots: [] });
  });
});

describe("replaceSkillPrompts", () => {
  it("pins published versions, defaults aliases, keeps bindings as given and derives the schemas", async () => {
    const { view, weather, poem } = await composedSkill();
    expect(view.described.promptComposition).toEqual([
      {
        order: 1,
        alias: "weather",
        promptId: weather.promptId,
        promptVersionId: weather.versionId,
        promptName: "Weather",
        version: 1,
        variables: "{}",
      },
      {
        order: 2,
        alias: "step2",
        promptId: poem.promptId,
        promptVersionId: poem.versionId,
        promptName: "Poem",
        version: 1,
        variables: '{"topic":"{{steps.weather.output.text}}","tone":"calm"}',
      },
    ]);
    expect(JSON.parse(view.described.inputSchema)).toEqual({
      type: "object",
      properties: { city: { type: "string" }, days: { type: "integer" } },
      required: ["city"],
    });
    expect(view.described.outputSchema).toBe('{"type":"string"}');
  });

  it("takes the output schema of a last json_schema step", async () => {
    const weather = await newPrompt({ responseFormatJson: SUMMARY_FORMAT });
    const { draftId } = await newSkill();
    const view = await catalog.skills.replaceSkillPrompts(userA, {
      skillVersionId: draftId,
      prompts: [{ promptId: weather.promptId }],
    });
    expect(view.described.outputSchema).toBe('{"type":"object","properties":{"text":{"type":"string"}}}');
  });

  it("pins the live published version when none is named, and an older published one when named", async () => {
    const weather = await newPrompt();
    const v2 = await catalog.prompts.createPromptVersion(userA, {
      promptId: weather.promptId,
      systemPrompt: "Forecast for {{city}}",
      variablesSchemaJson: '{"type":"object","properties":{"city":{"type":"string"}}}',
      tools: [],
    });
    await catalog.prompts.publishPromptVersion(userA, { promptId: weather.promptId, versionId: v2._id });
    const { draftId } = await newSkill();
    let view = await catalog.skills.replaceSkillPrompts(userA, {
      skillVersionId: draftId,
      prompts: [{ promptId: weather.promptId }],
    });
    expect(view.described.promptComposition[0]).toMatchObject({ promptVersionId: v2._id, version: 2 });
    view = await catalog.skills.replaceSkillPrompts(userA, {
      skillVersionId: draftId,
      prompts: [{ promptId: weather.promptId, promptVersionId: weather.versionId }],
    });
    expect(view.described.promptComposition[0]).toMatchObject({ promptVersionId: weather.versionId, version: 1 });
  });

  it("refuses unpublished prompt versions and prompts with nothing published (409), changing nothing", async () => {
    const draftOnly = await newPrompt({ publish: false });
    const { draftId } = await newSkill();
    const before = await snapshotOf(catalog.collections);
    const named = await rejectionOf(
      catalog.skills.replaceSkillPrompts(userA, {
        skillVersionId: draftId,
        prompts: [{ promptId: draftOnly.promptId, promptVersionId: draftOnly.versionId }],
      }),
    );
    expect(named).toMatchObject({
      kind: "failed_precondition",
      details: [{ field: "prompts[0].promptVersionId", issue: "version 1 is not published" }],
    });
    const unnamed = await rejectionOf(
      catalog.skills.replaceSkillPrompts(userA, {
        skillVersionId: draftId,
        prompts: [{ promptId: draftOnly.promptId }],
      }),
    );
    expect(unnamed).toMatchObject({
      kind: "failed_precondition",
      details: [{ field: "prompts[0].promptVersionId", issue: 'prompt "Weather" has no published version' }],
    });
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });

  it("is not_found for another organization's prompt or a version of another prompt", async () => {
    const foreign = await newPrompt({ organizationId: ORG_B, principal: userB });
    const mine = await newPrompt();
    const { draftId } = await newSkill();
    const before = await snapshotOf(catalog.collections);
    const error = await rejectionOf(
      catalog.skills.replaceSkillPrompts(userA, {
        skillVersionId: draftId,
        prompts: [{ promptId: mine.promptId }, { promptId: foreign.promptId }],
      }),
    );
    expect(error).toMatchObject({ kind: "not_found", details: [{ field: "prompts[1].promptId" }] });
    const wrongVersion = await rejectionOf(
      catalog.skills.replaceSkillPrompts(userA, {
        skillVersionId: draftId,
        prompts: [{ promptId: mine.promptId, promptVersionId: foreign.versionId }],
      }),
    );
    expect(wrongVersion).toMatchObject({ kind: "not_found", details: [{ field: "prompts[0].promptVersionId" }] });
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });

  it("refuses bindings to later steps, undeclared variables, bad JSON and bad aliases (400), changing nothing", async () => {
    const weather = await newPrompt({ responseFormatJson: SUMMARY_FORMAT });
    const { draftId } = await newSkill();
    const before = await snapshotOf(catalog.collections);
    const later = await rejectionOf(
      catalog.skills.replaceSkillPrompts(userA, {
        skillVersionId: draftId,
        prompts: [
          { promptId: weather.promptId, variablesJson: '{"city":"{{steps.second.output.text}}","mood":"x"}' },
          { promptId: weather.promptId, alias: "second" },
        ],
      }),
    );
    expect(later.kind).toBe("invalid_argument");
    expect(later.details).toEqual([
      { field: "prompts[0].variables.city", issue: 'refers to step "second", which does not come before this step' },
      {
        field: "prompts[0].variables.mood",
        issue: "is not a variable declared by this prompt version's variablesSchema",
      },
    ]);
    const syntax = await rejectionOf(
      catalog.skills.replaceSkillPrompts(userA, {
        skillVersionId: draftId,
        prompts: [
          { promptId: weather.promptId, variablesJson: "[1]", alias: "a b" },
          { promptId: "", variablesJson: "{" },
        ],
      }),
    );
    expect(syntax.details).toEqual([
      { field: "prompts[0].alias", issue: "must start with a letter or _ and hold at most 64 letters, digits or _" },
      { field: "prompts[0].variables", issue: "must be an object of variable names to bindings" },
      { field: "prompts[1].promptId", issue: "is required" },
      { field: "prompts[1].variables", issue: "is not valid JSON" },
    ]);
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });

  it("refuses to change a published version (409) and hides other organizations' versions (404)", async () => {
    const { skillId, draftId, weather } = await composedSkill();
    await catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    const before = await snapshotOf(catalog.collections);
    const published = await rejectionOf(
      catalog.skills.replaceSkillPrompts(userA, { skillVersionId: draftId, prompts: [{ promptId: weather.promptId }] }),
    );
    expect(published).toMatchObject({
      kind: "failed_precondition",
      details: [{ field: "skillVersionId", issue: "is published" }],
    });
    const tools = await rejectionOf(catalog.skills.replaceSkillTools(userA, { skillVersionId: draftId, tools: [] }));
    expect(tools.kind).toBe("failed_precondition");
    const foreign = await rejectionOf(
      catalog.skills.replaceSkillPrompts(userB, { skillVersionId: draftId, prompts: [] }),
    );
    expect(foreign).toMatchObject({ kind: "not_found", message: "skill version not found" });
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });
});

describe("replaceSkillTools", () => {
  it("pins the extra tools of a draft version", async () => {
    const clock = await newTool("clock");
    const { draftId } = await newSkill();
    const view = await catalog.skills.replaceSkillTools(userA, {
      skillVersionId: draftId,
      tools: [{ toolId: clock.tool._id }],
    });
    expect(view.described.tools).toEqual([
      { toolId: clock.tool._id, toolVersionId: clock.current._id, toolKey: "clock" },
    ]);
    expect(view.skill.updatedAt.getTime()).toBeGreaterThan(view.skill.createdAt.getTime());
  });

  it("refuses one tool key at two versions, in the list or against a step's prompt tools", async () => {
    const weatherTool = await newTool("weather");
    const v2 = await catalog.tools.createToolVersion(userA, { toolId: weatherTool.tool._id });
    const prompt = await newPrompt({
      tools: [{ toolId: weatherTool.tool._id, toolVersionId: weatherTool.current._id }],
    });
    const { draftId } = await newSkill();
    await catalog.skills.replaceSkillPrompts(userA, {
      skillVersionId: draftId,
      prompts: [{ promptId: prompt.promptId }],
    });
    const before = await snapshotOf(catalog.collections);
    const twice = await rejectionOf(
      catalog.skills.replaceSkillTools(userA, {
        skillVersionId: draftId,
        tools: [
          { toolId: weatherTool.tool._id, toolVersionId: weatherTool.current._id },
          { toolId: weatherTool.tool._id },
        ],
      }),
    );
    expect(twice.kind).toBe("invalid_argument");
    expect(twice.details[0]).toEqual({ field: "tools[1]", issue: 'tool key "weather" is already listed at tools[0]' });
    const againstPrompt = await rejectionOf(
      catalog.skills.replaceSkillTools(userA, { skillVersionId: draftId, tools: [{ toolId: weatherTool.tool._id }] }),
    );
    expect(againstPrompt.details).toEqual([
      {
        field: "tools[0]",
        issue: `pins tool "weather" to ${v2._id}, but step "step1" pins ${weatherTool.current._id}`,
      },
    ]);
    expect(await snapshotOf(catalog.collections)).toEqual(before);
    // The same pin as the prompt's is no conflict.
    await catalog.skills.replaceSkillTools(userA, {
      skillVersionId: draftId,
      tools: [{ toolId: weatherTool.tool._id, toolVersionId: weatherTool.current._id }],
    });
  });

  it("refuses prompts whose tools clash with the skill's tools", async () => {
    const weatherTool = await newTool("weather");
    await catalog.tools.createToolVersion(userA, { toolId: weatherTool.tool._id });
    const prompt = await newPrompt({
      tools: [{ toolId: weatherTool.tool._id, toolVersionId: weatherTool.current._id }],
    });
    const { draftId } = await newSkill();
    await catalog.skills.replaceSkillTools(userA, {
      skillVersionId: draftId,
      tools: [{ toolId: weatherTool.tool._id }],
    });
    const error = await rejectionOf(
      catalog.skills.replaceSkillPrompts(userA, { skillVersionId: draftId, prompts: [{ promptId: prompt.promptId }] }),
    );
    expect(error).toMatchObject({ kind: "invalid_argument", details: [{ field: "prompts[0].promptVersionId" }] });
  });

  it("is not_found for another organization's tool", async () => {
    const foreign = await newTool("weather", ORG_B, userB);
    const { draftId } = await newSkill();
    const error = await rejectionOf(
      catalog.skills.replaceSkillTools(userA, { skillVersionId: draftId, tools: [{ toolId: foreign.tool._id }] }),
    );
    expect(error).toMatchObject({ kind: "not_found", details: [{ field: "tools[0].toolId" }] });
  });
});

describe("publishSkillVersion", () => {
  it("publishes the draft and releases the draft slot", async () => {
    const { skillId, draftId } = await composedSkill();
    const view = await catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    expect(view).toMatchObject({ publishedVersionId: draftId, draftVersionId: null });
    expect(view.described).toMatchObject({ _id: draftId, status: "published", publishedAt: expect.any(Date) });
    expect(await catalog.collections.skillDraftSlots.countDocuments({})).toBe(0);
  });

  it("refuses an empty composition with details (409)", async () => {
    const { skillId } = await newSkill();
    const before = await snapshotOf(catalog.collections);
    const error = await rejectionOf(catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" }));
    expect(error).toMatchObject({
      kind: "failed_precondition",
      details: [{ field: "promptComposition", issue: "is empty" }],
    });
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });

  it("refuses a composition that no longer resolves (409)", async () => {
    const { skillId, poem } = await composedSkill();
    // Prompt versions are never deleted through the API; a damaged store still must not publish.
    await catalog.collections.promptVersions.deleteOne({ _id: poem.versionId });
    const error = await rejectionOf(catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" }));
    expect(error).toMatchObject({
      kind: "failed_precondition",
      details: [{ field: "promptComposition[1].promptVersionId", issue: "no longer exists" }],
    });
  });

  it("refuses publishing twice, or with no draft, and a version of another skill", async () => {
    const { skillId, draftId } = await composedSkill();
    const other = await newSkill();
    await catalog.skills.publishSkillVersion(userA, { skillId, versionId: draftId });
    const twice = await rejectionOf(catalog.skills.publishSkillVersion(userA, { skillId, versionId: draftId }));
    expect(twice).toMatchObject({
      kind: "failed_precondition",
      details: [{ field: "versionId", issue: "is already published" }],
    });
    const noDraft = await rejectionOf(catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" }));
    expect(noDraft).toMatchObject({
      kind: "failed_precondition",
      message: "the skill has no draft version to publish",
    });
    const foreign = await rejectionOf(catalog.skills.publishSkillVersion(userA, { skillId, versionId: other.draftId }));
    expect(foreign).toMatchObject({ kind: "not_found", message: "skill version not found" });
    expect((await rejectionOf(catalog.skills.publishSkillVersion(userB, { skillId, versionId: "" }))).kind).toBe(
      "not_found",
    );
    expect((await rejectionOf(catalog.skills.publishSkillVersion(keyAReadOnly, { skillId, versionId: "" }))).kind).toBe(
      "permission_denied",
    );
  });
});

describe("createSkillVersion", () => {
  it("allows one draft at a time: a second is 409 with the existing draft's id", async () => {
    const { skillId, draftId } = await newSkill();
    const before = await snapshotOf(catalog.collections);
    const error = await rejectionOf(catalog.skills.createSkillVersion(userA, { skillId, fromVersionId: "" }));
    expect(error).toMatchObject({
      kind: "failed_precondition",
      details: [{ field: "draftVersionId", issue: draftId }],
    });
    expect(error.message).toContain(draftId);
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });

  it("copies the latest version into a new numbered draft after publishing", async () => {
    const { skillId, draftId, view: composed } = await composedSkill();
    await catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    const v2 = await catalog.skills.createSkillVersion(userA, { skillId, fromVersionId: "" });
    expect(v2).toMatchObject({
      version: 2,
      status: "draft",
      promptComposition: composed.described.promptComposition,
      inputSchema: composed.described.inputSchema,
      outputSchema: composed.described.outputSchema,
    });
    const view = await catalog.skills.getSkill(userA, { id: skillId, versionId: "" });
    expect(view).toMatchObject({ draftVersionId: v2._id, publishedVersionId: draftId });
    expect(view.described._id).toBe(v2._id);
    expect(view.versions.map((v) => [v.version, v.status])).toEqual([
      [1, "published"],
      [2, "draft"],
    ]);
    const published = await catalog.skills.getSkill(keyAReadOnly, { id: skillId, versionId: draftId });
    expect(published.described._id).toBe(draftId);
  });

  it("copies a named version, and is not_found for another skill's version", async () => {
    const { skillId, draftId } = await composedSkill();
    await catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    const other = await newSkill();
    const error = await rejectionOf(
      catalog.skills.createSkillVersion(userA, { skillId, fromVersionId: other.draftId }),
    );
    expect(error).toMatchObject({ kind: "not_found", message: "skill version not found" });
    const v2 = await catalog.skills.createSkillVersion(userA, { skillId, fromVersionId: draftId });
    expect(v2.version).toBe(2);
  });

  it("lets exactly one of concurrent creations win", async () => {
    const { skillId } = await composedSkill();
    await catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, () => catalog.skills.createSkillVersion(userA, { skillId, fromVersionId: "" })),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    expect(await catalog.collections.skillVersions.countDocuments({ skillId, status: "draft" })).toBe(1);
  });

  it("takes over a slot whose version was published but not released", async () => {
    const { skillId, draftId } = await composedSkill();
    await catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    // As if publishing had stopped between the status change and the release of the slot.
    await catalog.collections.skillDraftSlots.insertOne({ _id: skillId, versionId: draftId, createdAt: new Date() });
    const v2 = await catalog.skills.createSkillVersion(userA, { skillId, fromVersionId: "" });
    expect(await catalog.collections.skillDraftSlots.findOne({ _id: skillId })).toMatchObject({ versionId: v2._id });
  });
  it("takes over a slot whose version never appeared once it is old, not while it is recent", async () => {
    const { skillId, draftId } = await composedSkill();
    await catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    // A creation in flight (slot claimed, version not inserted yet) blocks a second draft ...
    await catalog.collections.skillDraftSlots.insertOne({
      _id: skillId,
      versionId: "sv_inflight",
      createdAt: new Date("2026-01-01T00:10:00Z"),
    });
    const blocked = await rejectionOf(catalog.skills.createSkillVersion(userA, { skillId, fromVersionId: draftId }));
    expect(blocked).toMatchObject({
      kind: "failed_precondition",
      details: [{ field: "draftVersionId", issue: "sv_inflight" }],
    });
    // ... but one that crashed long ago does not.
    await catalog.collections.skillDraftSlots.updateOne(
      { _id: skillId },
      { $set: { createdAt: new Date("2025-01-01T00:00:00Z") } },
    );
    const v2 = await catalog.skills.createSkillVersion(userA, { skillId, fromVersionId: draftId });
    expect(await catalog.collections.skillDraftSlots.findOne({ _id: skillId })).toMatchObject({ versionId: v2._id });
  });
});

describe("getSkill, listSkills, updateSkill", () => {
  it("hides other organizations' skills and unknown versions", async () => {
    const { skillId } = await newSkill();
    expect(await rejectionOf(catalog.skills.getSkill(userB, { id: skillId, versionId: "" }))).toMatchObject({
      kind: "not_found",
      message: "skill not found",
    });
    expect((await rejectionOf(catalog.skills.getSkill(userA, { id: skillId, versionId: "sv_nope" }))).message).toBe(
      "skill version not found",
    );
  });

  it("lists an organization's skills newest first", async () => {
    const a = await newSkill();
    const b = await newSkill();
    await newSkill(userB, ORG_B);
    const page = await catalog.skills.listSkills(userA, { organizationId: ORG_A, limit: 1, cursor: "" });
    expect(page.items.map((v) => v.skill._id)).toEqual([b.skillId]);
    const next = await catalog.skills.listSkills(userA, { organizationId: ORG_A, limit: 1, cursor: page.nextCursor });
    expect(next.items.map((v) => [v.skill._id, v.draftVersionId])).toEqual([[a.skillId, a.draftId]]);
    expect(
      (await rejectionOf(catalog.skills.listSkills(userA, { organizationId: "", limit: 0, cursor: "" }))).kind,
    ).toBe("invalid_argument");
  });

  it("changes name and description only", async () => {
    const { skillId } = await newSkill();
    const view = await catalog.skills.updateSkill(userA, { id: skillId, description: "Plans trips" });
    expect(view.skill).toMatchObject({ name: "Trip", description: "Plans trips" });
    expect((await rejectionOf(catalog.skills.updateSkill(userB, { id: skillId, name: "x" }))).kind).toBe("not_found");
  });
});

describe("diffSkillVersions", () => {
  it("diffs a new draft against the version before it, and version 1 against nothing", async () => {
    const { skillId, draftId } = await composedSkill();
    await catalog.skills.publishSkillVersion(userA, { skillId, versionId: "" });
    const v2 = await catalog.skills.createSkillVersion(userA, { skillId, fromVersionId: "" });
    const clock = await newTool("clock");
    await catalog.skills.replaceSkillTools(userA, { skillVersionId: v2._id, tools: [{ toolId: clock.tool._id }] });
    const diff = await catalog.skills.diffSkillVersions(keyAReadOnly, {
      skillId,
      versionId: v2._id,
      againstVersionId: "",
    });
    expect(diff.from).toEqual({ versionId: draftId, version: 1 });
    expect(diff.changes).toEqual([
      {
        op: "add",
        path: "/tools/0",
        after: { toolId: clock.tool._id, toolVersionId: clock.current._id, toolKey: "clock" },
      },
    ]);
    const first = await catalog.skills.diffSkillVersions(userA, { skillId, versionId: draftId, againstVersionId: "" });
    expect(first.from).toBeNull();
    expect(first.changes.map((c) => c.path)).toEqual(["/promptComposition", "/tools", "/inputSchema", "/outputSchema"]);
    expect(first.changes[0]?.after).toEqual([
      expect.objectContaining({ alias: "weather", variables: {} }),
      expect.objectContaining({ alias: "step2", variables: { topic: "{{steps.weather.output.text}}", tone: "calm" } }),
    ]);
    const other = await newSkill();
    const error = await rejectionOf(
      catalog.skills.diffSkillVersions(userA, { skillId, versionId: v2._id, againstVersionId: other.draftId }),
    );
    expect(error).toMatchObject({ kind: "not_found", message: "skill version not found" });
  });
});
