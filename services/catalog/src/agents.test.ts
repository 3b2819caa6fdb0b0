import type { Principal } from "@kiln/kit/principal";
import { beforeEach, describe, expect, it } from "vitest";
import { createTestCatalog, ORG_A, ORG_B, principals, rejectionOf, snapshotOf } from "../test/test-catalog.js";

const { userA, userB, keyA, keyB, keyAReadOnly, keyARunner, keyBRunner } = principals;

let catalog: Awaited<ReturnType<typeof createTestCatalog>>;
beforeEach(async () => {
  catalog = await createTestCatalog();
});

async function newPrompt(organizationId = ORG_A, principal: Principal = userA, publish = true) {
  const { prompt } = await catalog.prompts.createPrompt(principal, {
    organizationId,
    name: "Weather",
    description: "",
  });
  const version = await catalog.prompts.createPromptVersion(principal, {
    promptId: prompt._id,
    systemPrompt: "Weather in {{city}}",
    variablesSchemaJson: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}',
    tools: [],
  });
  if (publish) await catalog.prompts.publishPromptVersion(principal, { promptId: prompt._id, versionId: version._id });
  return { promptId: prompt._id, versionId: version._id };
}

async function newTool(organizationId = ORG_A, principal: Principal = userA) {
  const view = await catalog.tools.createTool(principal, {
    organizationId,
    toolKey: `t${Math.random().toString(36).slice(2, 8)}`,
    name: "Lookup",
    description: "looks up",
    type: "manual_stub",
    configJson: '{"result":{"ok":true}}',
    inputSchemaJson: '{"type":"object"}',
  });
  return { toolId: view.tool._id, versionId: view.current._id };
}

async function newAgent(principal: Principal = userA, organizationId = ORG_A) {
  const view = await catalog.agents.createAgent(principal, { organizationId, name: "Planner", description: "" });
  return { agentId: view.agent._id, draftId: view.described._id };
}

/** A valid workflow over a prompt (unpinned) and a tool (pinned). */
function workflowOf(promptId: string, toolId: string, toolVersionId?: string) {
  return {
    inputSchema: { type: "object", properties: { city: { type: "string" } } },
    entry: "weather",
    steps: [
      {
        id: "weather",
        type: "prompt",
        ref: { promptId },
        input: { city: "{{inputs.city}}" },
        next: [{ when: { "==": [{ var: "inputs.city" }, "Oslo"] }, to: "lookup" }],
      },
      {
        id: "lookup",
        type: "tool",
        ref: toolVersionId ? { toolId, toolVersionId } : { toolId },
        input: { q: "{{steps.weather.output}}" },
      },
    ],
    output: "{{steps.weather.output}}",
  };
}

async function savedAgent() {
  const prompt = await newPrompt();
  const tool = await newTool();
  const { agentId, draftId } = await newAgent();
  const workflow = workflowOf(prompt.promptId, tool.toolId, tool.versionId);
  await catalog.agents.saveAgentWorkflow(userA, { agentVersionId: draftId, workflowJson: JSON.stringify(workflow) });
  return { agentId, draftId, prompt, tool, workflow };
}

describe("agents", () => {
  it("creates an agent with an empty draft version 1, reads, lists and renames it", async () => {
    const created = await catalog.agents.createAgent(userA, {
      organizationId: ORG_A,
      name: " Planner ",
      description: "",
    });
    expect(created.agent).toMatchObject({ name: "Planner", organizationId: ORG_A });
    expect(created.agent._id).toMatch(/^agt_/);
    expect(created.described).toMatchObject({ version: 1, status: "draft", workflow: "{}" });
    expect(created.described._id).toMatch(/^av_/);
    expect(created.draftVersionId).toBe(created.described._id);
    expect(created.publishedVersionId).toBeNull();
    const read = await catalog.agents.getAgent(keyA, { id: created.agent._id, versionId: "" });
    expect(read.described._id).toBe(created.described._id);
    const list = await catalog.agents.listAgents(keyAReadOnly, { organizationId: ORG_A, limit: 0, cursor: "" });
    expect(list.items.map((a) => a.agent._id)).toEqual([created.agent._id]);
    const renamed = await catalog.agents.updateAgent(userA, { id: created.agent._id, name: "Router" });
    expect(renamed.agent.name).toBe("Router");
  });

  it("refuses bad input, other organizations and missing scopes", async () => {
    const { agentId, draftId } = await newAgent();
    const before = await snapshotOf(catalog.collections);
    const refusals: [string, Promise<unknown>, string][] = [
      [
        "empty name",
        catalog.agents.createAgent(userA, { organizationId: ORG_A, name: " ", description: "" }),
        "invalid_argument",
      ],
      [
        "no org",
        catalog.agents.createAgent(userA, { organizationId: "", name: "x", description: "" }),
        "invalid_argument",
      ],
      [
        "non-member create",
        catalog.agents.createAgent(userB, { organizationId: ORG_A, name: "x", description: "" }),
        "not_found",
      ],
      [
        "read-only key create",
        catalog.agents.createAgent(keyAReadOnly, { organizationId: ORG_A, name: "x", description: "" }),
        "permission_denied",
      ],
      ["other org get", catalog.agents.getAgent(userB, { id: agentId, versionId: "" }), "not_found"],
      ["other org key get", catalog.agents.getAgent(keyB, { id: agentId, versionId: "" }), "not_found"],
      ["unknown version", catalog.agents.getAgent(userA, { id: agentId, versionId: "av_x" }), "not_found"],
      ["other org update", catalog.agents.updateAgent(userB, { id: agentId, name: "x" }), "not_found"],
      ["read-only update", catalog.agents.updateAgent(keyAReadOnly, { id: agentId, name: "x" }), "permission_denied"],
      [
        "other org save",
        catalog.agents.saveAgentWorkflow(keyB, { agentVersionId: draftId, workflowJson: "{}" }),
        "not_found",
      ],
      [
        "read-only save",
        catalog.agents.saveAgentWorkflow(keyAReadOnly, { agentVersionId: draftId, workflowJson: "{}" }),
        "permission_denied",
      ],
      ["other org validate", catalog.agents.validateAgentWorkflow(userB, { agentVersionId: draftId }), "not_found"],
      ["other org version", catalog.agents.createAgentVersion(userB, { agentId, fromVersionId: "" }), "not_found"],
      ["other org publish", catalog.agents.publishAgentVersion(userB, { agentId, versionId: "" }), "not_found"],
      [
        "other org diff",
        catalog.agents.diffAgentVersions(userB, { agentId, versionId: draftId, againstVersionId: "" }),
        "not_found",
      ],
      ["other org rollback", catalog.agents.rollbackAgentVersion(userB, { agentId, versionId: draftId }), "not_found"],
      [
        "bad JSON",
        catalog.agents.saveAgentWorkflow(userA, { agentVersionId: draftId, workflowJson: "{" }),
        "invalid_argument",
      ],
      [
        "malformed",
        catalog.agents.saveAgentWorkflow(userA, { agentVersionId: draftId, workflowJson: '{"steps":3}' }),
        "invalid_argument",
      ],
      [
        "empty workflow",
        catalog.agents.saveAgentWorkflow(userA, { agentVersionId: draftId, workflowJson: "{}" }),
        "invalid_argument",
      ],
      ["second draft", catalog.agents.createAgentVersion(userA, { agentId, fromVersionId: "" }), "failed_precondition"],
      ["publish empty", catalog.agents.publishAgentVersion(userA, { agentId, versionId: "" }), "failed_precondition"],
    ];
    for (const [what, p, kind] of refusals) expect((await rejectionOf(p)).kind, what).toBe(kind);
    expect(await snapshotOf(catalog.collections)).toEqual(before);
    const malformed = await rejectionOf(
      catalog.agents.saveAgentWorkflow(userA, { agentVersionId: draftId, workflowJson: '{"steps":3}' }),
    );
    expect(malformed.details.map((d) => d.field)).toEqual(
      expect.arrayContaining(["workflow.steps", "workflow.entry", "workflow.inputSchema", "workflow.output"]),
    );
  });

  it("validates with every finding, saves, then publishes with unversioned references pinned", async () => {
    const { agentId, draftId, prompt, tool, workflow } = await savedAgent();
    const broken = {
      ...workflow,
      steps: [
        { ...workflow.steps[0], ref: { promptId: "prm_missing" }, input: { city: "{{inputs.town}}" } },
        { ...workflow.steps[1], next: "weather" },
      ],
    };
    const invalid = await catalog.agents.validateAgentWorkflow(userA, {
      agentVersionId: draftId,
      workflowJson: JSON.stringify(broken),
    });
    expect(invalid.valid).toBe(false);
    expect(invalid.errors.map((e) => `${e.path} ${e.code}`)).toEqual([
      "steps[0].input.city unknown_input",
      "steps[0].ref.promptId unknown_reference",
      "steps[1].next unbounded_cycle",
    ]);
    const saved = await catalog.agents.validateAgentWorkflow(keyAReadOnly, { agentVersionId: draftId });
    expect(saved).toEqual({ valid: true, errors: [], warnings: [] });
    expect(
      await catalog.agents.validateAgentWorkflow(userA, { agentVersionId: draftId, workflowJson: "nope" }),
    ).toMatchObject({ valid: false, errors: [{ path: "", code: "malformed" }] });

    const published = await catalog.agents.publishAgentVersion(userA, { agentId, versionId: "" });
    expect(published.publishedVersionId).toBe(draftId);
    expect(published.draftVersionId).toBeNull();
    const stored = JSON.parse(published.described.workflow);
    expect(stored.steps[0].ref).toEqual({ promptId: prompt.promptId, promptVersionId: prompt.versionId });
    expect(stored.steps[1].ref).toEqual({ toolId: tool.toolId, toolVersionId: tool.versionId });
    // Immutable once published.
    const edit = await rejectionOf(
      catalog.agents.saveAgentWorkflow(userA, { agentVersionId: draftId, workflowJson: JSON.stringify(workflow) }),
    );
    expect(edit.kind).toBe("failed_precondition");
    expect((await rejectionOf(catalog.agents.publishAgentVersion(userA, { agentId, versionId: draftId }))).kind).toBe(
      "failed_precondition",
    );
  });

  it("refuses to publish an invalid workflow with the errors in details, and unpublished references", async () => {
    const prompt = await newPrompt(ORG_A, userA, false);
    const otherOrgTool = await newTool(ORG_B, userB);
    const { agentId, draftId } = await newAgent();
    await catalog.agents.saveAgentWorkflow(userA, {
      agentVersionId: draftId,
      workflowJson: JSON.stringify(workflowOf(prompt.promptId, otherOrgTool.toolId)),
    });
    const e = await rejectionOf(catalog.agents.publishAgentVersion(userA, { agentId, versionId: "" }));
    expect(e.kind).toBe("failed_precondition");
    expect(e.details.map((d) => d.field)).toEqual(["workflow.steps[0].ref.promptId", "workflow.steps[1].ref.toolId"]);
    expect(e.details[0]?.issue).toContain("unpublished_reference");
    expect(e.details[1]?.issue).toContain("unknown_reference");
  });

  it("keeps one draft, numbers versions, diffs them and rolls back by publishing a copy", async () => {
    const { agentId, draftId, workflow } = await savedAgent();
    await catalog.agents.publishAgentVersion(userA, { agentId, versionId: "" });
    const v2 = await catalog.agents.createAgentVersion(userA, { agentId, fromVersionId: "" });
    expect(v2).toMatchObject({ version: 2, status: "draft" });
    const changed = {
      ...workflow,
      steps: [{ ...workflow.steps[0], next: undefined }],
      output: "{{steps.weather.output}}",
    };
    await catalog.agents.saveAgentWorkflow(userA, { agentVersionId: v2._id, workflowJson: JSON.stringify(changed) });
    const e = await rejectionOf(catalog.agents.createAgentVersion(userA, { agentId, fromVersionId: draftId }));
    expect(e.details).toEqual([{ field: "draftVersionId", issue: v2._id }]);
    const afterV2 = await catalog.agents.publishAgentVersion(keyA, { agentId, versionId: v2._id });
    expect(afterV2.publishedVersionId).toBe(v2._id);

    const diff = await catalog.agents.diffAgentVersions(userA, { agentId, versionId: v2._id, againstVersionId: "" });
    expect(diff.from).toEqual({ versionId: draftId, version: 1 });
    expect(diff.changes).toContainEqual({ op: "remove", path: "/workflow/steps/1", before: expect.any(Object) });
    const first = await catalog.agents.diffAgentVersions(userA, { agentId, versionId: draftId, againstVersionId: "" });
    expect(first.from).toBeNull();
    expect(first.changes).toEqual([{ op: "add", path: "/workflow", after: expect.any(Object) }]);

    const rolled = await catalog.agents.rollbackAgentVersion(userA, { agentId, versionId: draftId });
    expect(rolled.versions.map((v) => [v.version, v.status])).toEqual([
      [1, "published"],
      [2, "published"],
      [3, "published"],
    ]);
    const v3 = rolled.versions[2];
    expect(rolled.publishedVersionId).toBe(v3?._id);
    expect(v3?.workflow).toBe(rolled.versions[0]?.workflow);
    // Rollback to the empty version 1 of a new agent is refused like publishing it.
    const fresh = await newAgent();
    const refused = await rejectionOf(
      catalog.agents.rollbackAgentVersion(userA, { ...fresh, versionId: fresh.draftId }),
    );
    expect(refused.kind).toBe("failed_precondition");
    expect((await rejectionOf(catalog.agents.rollbackAgentVersion(userA, { agentId, versionId: "av_x" }))).kind).toBe(
      "not_found",
    );
  });
});

describe("resolveAgentVersion", () => {
  it("resolves the published version's pinned steps for a runner of the organization", async () => {
    const { agentId, prompt, tool } = await savedAgent();
    await catalog.agents.publishAgentVersion(userA, { agentId, versionId: "" });
    const r = await catalog.resolver.resolveAgentVersion(keyARunner, { organizationId: ORG_A, agentId, versionId: "" });
    expect(r.version.status).toBe("published");
    expect(r.steps.map((s) => [s.stepId, s.type])).toEqual([
      ["weather", "prompt"],
      ["lookup", "tool"],
    ]);
    expect(r.steps[0]?.prompt?.version._id).toBe(prompt.versionId);
    expect(r.steps[1]?.tool).toMatchObject({ pin: { toolId: tool.toolId, toolVersionId: tool.versionId } });
  });

  it("pins a draft's references at resolve time and refuses an invalid draft", async () => {
    const { agentId, draftId, prompt } = await savedAgent();
    const r = await catalog.resolver.resolveAgentVersion(userA, { organizationId: ORG_A, agentId, versionId: draftId });
    expect(JSON.parse(r.version.workflow).steps[0].ref.promptVersionId).toBe(prompt.versionId);
    const empty = await newAgent();
    const e = await rejectionOf(
      catalog.resolver.resolveAgentVersion(userA, { organizationId: ORG_A, ...empty, versionId: empty.draftId }),
    );
    expect(e.kind).toBe("failed_precondition");
    expect(
      (
        await rejectionOf(
          catalog.resolver.resolveAgentVersion(userA, { organizationId: ORG_A, agentId, versionId: "" }),
        )
      ).kind,
    ).toBe("failed_precondition");
  });

  it("hides agents of other organizations and needs runs:write", async () => {
    const { agentId } = await savedAgent();
    await catalog.agents.publishAgentVersion(userA, { agentId, versionId: "" });
    const input = { organizationId: ORG_A, agentId, versionId: "" };
    expect((await rejectionOf(catalog.resolver.resolveAgentVersion(keyBRunner, input))).kind).toBe("not_found");
    expect(
      (await rejectionOf(catalog.resolver.resolveAgentVersion(keyB, { ...input, organizationId: ORG_B }))).kind,
    ).toBe("permission_denied");
    expect((await rejectionOf(catalog.resolver.resolveAgentVersion(keyAReadOnly, input))).kind).toBe(
      "permission_denied",
    );
    expect(
      (await rejectionOf(catalog.resolver.resolveAgentVersion(keyBRunner, { ...input, organizationId: ORG_B }))).kind,
    ).toBe("not_found");
  });
});
