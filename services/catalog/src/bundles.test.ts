import { DomainError } from "@kiln/kit/errors";
import { beforeEach, describe, expect, it } from "vitest";
import { createTestCatalog, ORG_A, ORG_B, principals, rejectionOf, snapshotOf } from "../test/test-catalog.js";

const { userA, userB, userMember, keyAReadOnly } = principals;

let catalog: Awaited<ReturnType<typeof createTestCatalog>>;
let bundleJson: string;

const SCHEMA = '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}';

/** ORG_A: a tool, a prompt (v1 published with the tool, v2 draft, a label), a published skill. */
async function seed() {
  const tool = await catalog.tools.createTool(userA, {
    organizationId: ORG_A,
    toolKey: "weather",
    name: "Weather",
    description: "",
    type: "manual_stub",
    configJson: '{"result":{"sky":"clear"}}',
    inputSchemaJson: '{"type":"object"}',
  });
  const prompt = await catalog.prompts.createPrompt(userA, {
    organizationId: ORG_A,
    name: "Forecast",
    description: "",
  });
  const promptId = prompt.prompt._id;
  const v1 = await catalog.prompts.createPromptVersion(userA, {
    promptId,
    systemPrompt: "Weather in {{city}}",
    variablesSchemaJson: SCHEMA,
    tools: [{ toolId: tool.tool._id }],
  });
  await catalog.prompts.publishPromptVersion(userA, { promptId, versionId: v1._id });
  const v2 = await catalog.prompts.createPromptVersion(userA, {
    promptId,
    systemPrompt: "Forecast for {{city}}",
    variablesSchemaJson: SCHEMA,
    tools: [],
  });
  await catalog.labels.setLabel(userA, { kind: "prompt", parentId: promptId, label: "staging", versionId: v2._id });
  const skill = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "Forecaster", description: "" });
  const draftId = skill.versions[0]?._id ?? "";
  await catalog.skills.replaceSkillPrompts(userA, {
    skillVersionId: draftId,
    prompts: [{ promptId, variablesJson: '{"city":"{{input.city}}"}' }],
  });
  await catalog.skills.publishSkillVersion(userA, { skillId: skill.skill._id, versionId: draftId });
  return JSON.stringify(await catalog.bundles.exportBundle(userA, { organizationId: ORG_A }));
}

beforeEach(async () => {
  catalog = await createTestCatalog({ staleImportMs: 60_000 });
  bundleJson = await seed();
});

/** Every collection but the import journals, which record the attempt. */
async function state() {
  const { imports: _, ...rest } = await snapshotOf(catalog.collections);
  return rest;
}

describe("import", () => {
  it("a failure half-way through writing undoes what was written", async () => {
    const before = await state();
    const versions = catalog.collections.promptVersions;
    const insertMany = versions.insertMany.bind(versions);
    versions.insertMany = async () => {
      throw new Error("the store went away");
    };
    await expect(
      catalog.bundles.importBundle(userB, { organizationId: ORG_B, bundleJson, dryRun: false }),
    ).rejects.toThrow("the store went away");
    versions.insertMany = insertMany;
    expect(await state()).toEqual(before);
    const [journal] = await catalog.collections.imports.find({});
    expect(journal?.status).toBe("undone");
    // Tried again, it imports whole.
    const r = await catalog.bundles.importBundle(userB, { organizationId: ORG_B, bundleJson, dryRun: false });
    await catalog.bundles.finishImport(userB, { organizationId: ORG_B, importId: r.importId, commit: true });
    expect(r.items.map((i) => i.outcome)).toEqual(["created", "created", "created"]);
  });

  it("an import its caller never finished is undone by the sweep once stale, not before", async () => {
    const before = await state();
    const r = await catalog.bundles.importBundle(userB, { organizationId: ORG_B, bundleJson, dryRun: false });
    expect((await catalog.collections.prompts.find({ organizationId: ORG_B })).length).toBe(1);
    expect(await catalog.bundles.sweep()).toBe(0);
    // Another replica, an hour later.
    const later = await createTestCatalog({ store: catalog.store, now: () => new Date("2030-01-01T00:00:00Z") });
    expect(await later.bundles.sweep()).toBe(1);
    expect(await state()).toEqual(before);
    await expect(
      catalog.bundles.finishImport(userB, { organizationId: ORG_B, importId: r.importId, commit: true }),
    ).rejects.toThrow(/undone/);
  });

  it("a committed import sends its label moves as events, once", async () => {
    const seen: { subject: string; organizationId: string }[] = [];
    catalog.bus.consume({ stream: "CATALOG", durable: "test" }, async (msg) => {
      seen.push({ subject: msg.subject, organizationId: msg.json<{ organizationId: string }>().organizationId });
    });
    const r = await catalog.bundles.importBundle(userB, { organizationId: ORG_B, bundleJson, dryRun: false });
    const moves = await catalog.collections.labelMoves.find({ organizationId: ORG_B });
    expect(moves.map((m) => [m.label, m.action])).toEqual([["staging", "moved"]]);
    await catalog.outbox.settled();
    const fromB = () => seen.filter((s) => s.organizationId === ORG_B);
    expect(fromB()).toEqual([]);
    await catalog.bundles.finishImport(userB, { organizationId: ORG_B, importId: r.importId, commit: true });
    await catalog.bundles.finishImport(userB, { organizationId: ORG_B, importId: r.importId, commit: true });
    await catalog.outbox.settled();
    for (let i = 0; i < 200 && fromB().length < 1; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(fromB()).toEqual([{ subject: "catalog.label.moved", organizationId: ORG_B }]);
    const err = await rejectionOf(
      catalog.bundles.finishImport(userB, { organizationId: ORG_B, importId: r.importId, commit: false }),
    );
    expect(err.kind).toBe("failed_precondition");
  });

  it("publishing and moving protected labels takes an owner or admin; a read-only key cannot import", async () => {
    const before = await state();
    const member = await rejectionOf(
      catalog.bundles.importBundle(userMember, {
        organizationId: ORG_A,
        bundleJson: bundleJson.replaceAll("prm_", "prm_x"),
        dryRun: false,
      }),
    );
    expect(member).toBeInstanceOf(DomainError);
    expect(member.kind).toBe("permission_denied");
    const key = await rejectionOf(
      catalog.bundles.importBundle(keyAReadOnly, { organizationId: ORG_A, bundleJson, dryRun: true }),
    );
    expect(key.kind).toBe("permission_denied");
    expect(await state()).toEqual(before);
  });

  it("importing an organization's own export changes nothing", async () => {
    const before = await state();
    const r = await catalog.bundles.importBundle(userA, { organizationId: ORG_A, bundleJson, dryRun: false });
    await catalog.bundles.finishImport(userA, { organizationId: ORG_A, importId: r.importId, commit: true });
    expect(r.items.map((i) => i.outcome)).toEqual(["skipped", "skipped", "skipped"]);
    expect(await state()).toEqual(before);
  });
});
