import { createMongoStore } from "@kiln/kit/store/mongo";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestCatalog, ORG_A, principals, rejectionOf } from "../test/test-catalog.js";

const url = inject("mongoUrl");
const database = `catalog_int_${Date.now()}`;
const store = createMongoStore({ url, database, appName: "catalog-int-test" });
let catalog: Awaited<ReturnType<typeof createTestCatalog>>;
const { userA, keyARunner } = principals;
const ref = (promptId: string) => ({ organizationId: ORG_A, promptId, versionId: "" });

beforeAll(async () => {
  catalog = await createTestCatalog({ store });
});

afterAll(async () => {
  await store.close();
  const admin = new MongoClient(url);
  try {
    await admin.db(database).dropDatabase();
  } finally {
    await admin.close();
  }
});

const AWKWARD =
  '{"type":"object", "properties":{"city":{"$ref":"#/$defs/city"},"a.b":{"type":"string"},"$x":{"type":"number"},' +
  '"__proto__":{"type":"boolean"},"10":{"type":"string"},"2":{"type":"string"}},"$defs":{"city":{"type":"string"}}}';

function createTool(toolKey: string, configJson = '{"result":{"$ref":"#/x","a.b":{"__proto__":1},"z":1,"a":2}}') {
  return catalog.tools.createTool(userA, {
    organizationId: ORG_A,
    toolKey,
    name: toolKey,
    description: "",
    type: "manual_stub",
    configJson,
    inputSchemaJson: AWKWARD,
  });
}

describe("catalog on FerretDB", () => {
  it("stores free-form JSON as text and gives it back byte for byte", async () => {
    const config = '{"result":{"$ref":"#/x","a.b":{"__proto__":1},"z":1,"a":2}}';
    const { tool } = await createTool("json", config);
    const view = await catalog.tools.getTool(userA, { id: tool._id });
    expect(view.current.config).toBe(config);
    expect(view.current.inputSchema).toBe(AWKWARD);

    const { prompt } = await catalog.prompts.createPrompt(userA, { organizationId: ORG_A, name: "P", description: "" });
    const version = await catalog.prompts.createPromptVersion(userA, {
      promptId: prompt._id,
      systemPrompt: "{{city}} {{$x}}",
      variablesSchemaJson: AWKWARD,
      tools: [{ toolId: tool._id }],
    });
    await catalog.prompts.publishPromptVersion(userA, { promptId: prompt._id, versionId: version._id });
    const read = await catalog.prompts.getPrompt(userA, { id: prompt._id, versionId: "" });
    expect(read.version?.variablesSchema).toBe(AWKWARD);
    expect(read.publishedVersionId).toBe(version._id);

    const skill = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "S", description: "" });
    const variables = '{"city":"{{input.$town}}","$x":3,"__proto__":"{{input.flag}}"}';
    const composed = await catalog.skills.replaceSkillPrompts(userA, {
      skillVersionId: skill.described._id,
      prompts: [{ promptId: prompt._id, variablesJson: variables }],
    });
    const again = await catalog.skills.getSkill(userA, { id: skill.skill._id, versionId: "" });
    expect(again.described.promptComposition[0]?.variables).toBe(variables);
    expect(again.described.inputSchema).toBe(composed.described.inputSchema);
    expect(Object.keys(JSON.parse(again.described.inputSchema).properties)).toEqual([
      "2",
      "10",
      "$town",
      "a.b",
      "flag",
    ]);
    const published = await catalog.skills.publishSkillVersion(userA, { skillId: skill.skill._id, versionId: "" });
    expect(published.publishedVersionId).toBe(skill.described._id);
  });

  it("resolves prompt and skill versions for a run with batched reads, JSON text unchanged", async () => {
    const config = '{"result":{"$ref":"#/x","a.b":{"__proto__":1},"z":1,"a":2}}';
    const tools = await Promise.all(["r1", "r2", "r3"].map((key) => createTool(`resolve-${key}`, config)));
    const { prompt } = await catalog.prompts.createPrompt(userA, { organizationId: ORG_A, name: "R", description: "" });
    const versionOf = (systemPrompt: string) =>
      catalog.prompts.createPromptVersion(userA, {
        promptId: prompt._id,
        systemPrompt,
        tools: tools.slice(0, 2).map((t) => ({ toolId: t.tool._id })),
      });
    const v1 = await versionOf("One");
    const v2 = await versionOf("Two");
    expect((await rejectionOf(catalog.resolver.resolvePromptVersion(keyARunner, ref(prompt._id)))).kind).toBe(
      "failed_precondition",
    );
    await catalog.prompts.publishPromptVersion(userA, { promptId: prompt._id, versionId: v1._id });
    await catalog.prompts.publishPromptVersion(userA, { promptId: prompt._id, versionId: v2._id });
    // The live published version is the one published last (a query sorted by publishedAt).
    const live = await catalog.resolver.resolvePromptVersion(keyARunner, ref(prompt._id));
    expect(live.version._id).toBe(v2._id);
    expect(live.tools.map((t) => [t.pin.toolKey, t.version.config, t.version.inputSchema])).toEqual([
      ["resolve-r1", config, AWKWARD],
      ["resolve-r2", config, AWKWARD],
    ]);
    const older = await catalog.resolver.resolvePromptVersion(keyARunner, { ...ref(prompt._id), versionId: v1._id });
    expect(older.version.systemPrompt).toBe("One");

    const skill = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "RS", description: "" });
    await catalog.skills.replaceSkillPrompts(userA, {
      skillVersionId: skill.described._id,
      prompts: [
        { promptId: prompt._id, alias: "a", promptVersionId: v1._id },
        { promptId: prompt._id, alias: "b" },
      ],
    });
    await catalog.skills.replaceSkillTools(userA, {
      skillVersionId: skill.described._id,
      tools: [{ toolId: tools[2]?.tool._id ?? "" }],
    });
    const input = { organizationId: ORG_A, skillId: skill.skill._id, versionId: "" };
    const draft = await catalog.resolver.resolveSkillVersion(keyARunner, { ...input, preferDraft: true });
    expect(draft.version.status).toBe("draft");
    await catalog.skills.publishSkillVersion(userA, { skillId: skill.skill._id, versionId: "" });
    const resolved = await catalog.resolver.resolveSkillVersion(keyARunner, { ...input, preferDraft: false });
    expect(resolved.version).toMatchObject({ _id: skill.described._id, status: "published" });
    expect(resolved.steps.map((s) => [s.step.alias, s.prompt.version._id, s.prompt.tools.length])).toEqual([
      ["a", v1._id, 2],
      ["b", v2._id, 2],
    ]);
    expect(resolved.tools.map((t) => [t.pin.toolKey, t.version.config])).toEqual([["resolve-r3", config]]);
    const foreign = await rejectionOf(
      catalog.resolver.resolveSkillVersion(principals.keyBRunner, { ...input, preferDraft: false }),
    );
    expect(foreign).toMatchObject({ kind: "not_found", message: "skill not found" });
  });

  it("refuses a second toolKey in the organization, also when the creations race", async () => {
    await createTool("clash");
    expect((await rejectionOf(createTool("clash"))).kind).toBe("already_exists");
    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => createTool("race")));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    for (const o of outcomes) if (o.status === "rejected") expect(o.reason).toMatchObject({ kind: "already_exists" });
    const tools = await catalog.collections.tools.find({ organizationId: ORG_A, toolKey: "race" });
    expect(tools).toHaveLength(1);
    // The losers' version documents were removed again.
    expect(
      await catalog.collections.toolVersions.countDocuments({
        organizationId: ORG_A,
        version: 1,
        toolId: { $nin: await toolIds() },
      }),
    ).toBe(0);
  });

  it("gives concurrent version creations distinct numbers", async () => {
    const { tool } = await createTool("versions");
    const versions = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        catalog.tools.createToolVersion(userA, { toolId: tool._id, configJson: `{"result":{"n":${i}}}` }),
      ),
    );
    expect(versions.map((v) => v.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7]);
    const view = await catalog.tools.getTool(userA, { id: tool._id });
    expect(view.latestVersion).toBe(7);
    const diff = await catalog.tools.diffToolVersions(userA, {
      toolId: tool._id,
      versionId: view.current._id,
      againstVersionId: "",
    });
    expect(diff.from?.version).toBe(6);
    expect(diff.changes.map((c) => c.path)).toEqual(["/config/result/n"]);
  });

  it("moves a label first by many writers at once: one label, every move in its history, runs resolve it", async () => {
    const { prompt } = await catalog.prompts.createPrompt(userA, { organizationId: ORG_A, name: "L", description: "" });
    const versions = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((n) =>
        catalog.prompts.createPromptVersion(userA, { promptId: prompt._id, systemPrompt: `v${n}`, tools: [] }),
      ),
    );
    const moved = await Promise.all(
      versions.map((v) =>
        catalog.labels.setLabel(userA, { kind: "prompt", parentId: prompt._id, label: "staging", versionId: v._id }),
      ),
    );
    expect(moved).toHaveLength(6);
    expect(await catalog.collections.labels.find({ parentId: prompt._id })).toHaveLength(1);
    const history = await catalog.labels.listLabelHistory(userA, {
      kind: "prompt",
      parentId: prompt._id,
      label: "staging",
      limit: 0,
      cursor: "",
    });
    expect(history.items).toHaveLength(6);
    const [label] = (await catalog.labels.listLabels(userA, { kind: "prompt", parentId: prompt._id })).filter(
      (l) => l.label === "staging",
    );
    const resolved = await catalog.resolver.resolvePromptVersion(keyARunner, {
      ...ref(prompt._id),
      label: "staging",
    });
    expect(resolved.version._id).toBe(label?.versionId);
    // A member (not owner or admin) moves staging, not production, and does not publish.
    const member = principals.userMember;
    await catalog.labels.setLabel(member, {
      kind: "prompt",
      parentId: prompt._id,
      label: "staging",
      versionId: versions[0]?._id ?? "",
    });
    const refused = await rejectionOf(
      catalog.labels.setLabel(member, {
        kind: "prompt",
        parentId: prompt._id,
        label: "production",
        versionId: versions[0]?._id ?? "",
      }),
    );
    expect(refused.kind).toBe("permission_denied");
    const publish = await rejectionOf(
      catalog.prompts.publishPromptVersion(member, { promptId: prompt._id, versionId: versions[0]?._id ?? "" }),
    );
    expect(publish.kind).toBe("permission_denied");
    expect((await catalog.prompts.getPrompt(userA, { id: prompt._id, versionId: "" })).publishedVersionId).toBeNull();
  });

  it("keeps one draft per skill when new versions race", async () => {
    const { prompt } = await catalog.prompts.createPrompt(userA, { organizationId: ORG_A, name: "Q", description: "" });
    const version = await catalog.prompts.createPromptVersion(userA, {
      promptId: prompt._id,
      systemPrompt: "Hi",
      tools: [],
    });
    await catalog.prompts.publishPromptVersion(userA, { promptId: prompt._id, versionId: version._id });
    const skill = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "Race", description: "" });
    await catalog.skills.replaceSkillPrompts(userA, {
      skillVersionId: skill.described._id,
      prompts: [{ promptId: prompt._id }],
    });
    await catalog.skills.publishSkillVersion(userA, { skillId: skill.skill._id, versionId: "" });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 4 }, () =>
        catalog.skills.createSkillVersion(userA, { skillId: skill.skill._id, fromVersionId: "" }),
      ),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    expect(await catalog.collections.skillVersions.countDocuments({ skillId: skill.skill._id, status: "draft" })).toBe(
      1,
    );
    const page = await catalog.skills.listSkills(userA, { organizationId: ORG_A, limit: 1, cursor: "" });
    expect(page.items[0]?.skill._id).toBe(skill.skill._id);
    expect(page.items[0]?.versions.map((v) => v.version)).toEqual([1, 2]);
  });

  it("keeps one draft per agent and numbers rolled-back versions distinctly when they race", async () => {
    const { prompt } = await catalog.prompts.createPrompt(userA, { organizationId: ORG_A, name: "A", description: "" });
    const version = await catalog.prompts.createPromptVersion(userA, {
      promptId: prompt._id,
      systemPrompt: "Hi",
      tools: [],
    });
    await catalog.prompts.publishPromptVersion(userA, { promptId: prompt._id, versionId: version._id });
    const agent = await catalog.agents.createAgent(userA, { organizationId: ORG_A, name: "Race", description: "" });
    const workflow =
      '{"inputSchema":{"type":"object","properties":{"__proto__":{"type":"string"}}},"entry":"a",' +
      `"steps":[{"id":"a","type":"prompt","ref":{"promptId":"${prompt._id}"},"input":{}}],"output":"{{steps.a.output}}"}`;
    const saved = await catalog.agents.saveAgentWorkflow(userA, {
      agentVersionId: agent.described._id,
      workflowJson: workflow,
    });
    expect(saved.workflow).toBe(workflow);
    const published = await catalog.agents.publishAgentVersion(userA, { agentId: agent.agent._id, versionId: "" });
    expect(JSON.parse(published.described.workflow).steps[0].ref.promptVersionId).toBe(version._id);

    const drafts = await Promise.allSettled(
      Array.from({ length: 4 }, () =>
        catalog.agents.createAgentVersion(userA, { agentId: agent.agent._id, fromVersionId: "" }),
      ),
    );
    expect(drafts.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    expect(await catalog.collections.agentVersions.countDocuments({ agentId: agent.agent._id, status: "draft" })).toBe(
      1,
    );

    const rollbacks = await Promise.all(
      Array.from({ length: 3 }, () =>
        catalog.agents.rollbackAgentVersion(userA, { agentId: agent.agent._id, versionId: agent.described._id }),
      ),
    );
    expect(rollbacks).toHaveLength(3);
    const view = await catalog.agents.getAgent(userA, { id: agent.agent._id, versionId: "" });
    expect(view.versions.map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
    expect(view.versions.filter((v) => v.status === "draft")).toHaveLength(1);
    const resolved = await catalog.resolver.resolveAgentVersion(keyARunner, {
      organizationId: ORG_A,
      agentId: agent.agent._id,
      versionId: "",
    });
    expect(resolved.steps[0]?.prompt?.version._id).toBe(version._id);
  });
});

async function toolIds(): Promise<string[]> {
  return (await catalog.collections.tools.find({})).map((t) => t._id);
}
