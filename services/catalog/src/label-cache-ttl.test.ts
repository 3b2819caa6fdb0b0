import { beforeEach, describe, expect, it } from "vitest";
import { createTestCatalog, ORG_A, ORG_B, principals, rejectionOf, snapshotOf } from "../test/test-catalog.js";

/**
 * The response cache's defaults in the catalog (docs/cache.md "Defaults"): a prompt version's
 * `cacheTtlSeconds`, fixed when it is created, and a prompt label's, set and cleared by the label
 * move that names it; the resolve answer carries the default of the label it went through
 * (production for the live version), never for a version named by id.
 */

const { userA, userB } = principals;
let catalog: Awaited<ReturnType<typeof createTestCatalog>>;
let promptId: string;
let v1: string;
let v2: string;

beforeEach(async () => {
  catalog = await createTestCatalog({ resolveCacheTtlMs: 60_000 });
  const { prompt } = await catalog.prompts.createPrompt(userA, { organizationId: ORG_A, name: "P", description: "" });
  promptId = prompt._id;
  v1 = (await catalog.prompts.createPromptVersion(userA, { promptId, systemPrompt: "One", tools: [] }))._id;
  v2 = (
    await catalog.prompts.createPromptVersion(userA, { promptId, systemPrompt: "Two", tools: [], cacheTtlSeconds: 90 })
  )._id;
  await catalog.prompts.publishPromptVersion(userA, { promptId, versionId: v1 });
});

const resolve = (by: { versionId?: string; label?: string } = {}) =>
  catalog.resolver.resolvePromptVersion(userA, { organizationId: ORG_A, promptId, versionId: "", ...by });

const setLabel = (
  label: string,
  versionId: string,
  change: { cacheTtlSeconds?: number; clearCacheTtlSeconds?: boolean },
) => catalog.labels.setLabel(userA, { kind: "prompt", parentId: promptId, label, versionId, ...change });

describe("a prompt version's default", () => {
  it("is kept with the version and resolved with it; a version without one has none", async () => {
    expect((await resolve({ versionId: v2 })).version.cacheTtlSeconds).toBe(90);
    expect((await resolve({ versionId: v1 })).version.cacheTtlSeconds).toBeUndefined();
    const view = await catalog.prompts.getPrompt(userA, { id: promptId, versionId: v2 });
    expect(view.version?.cacheTtlSeconds).toBe(90);
  });

  it("shows in the version diff", async () => {
    const diff = await catalog.prompts.diffPromptVersions(userA, { promptId, versionId: v2, againstVersionId: v1 });
    expect(JSON.stringify(diff)).toContain("cacheTtlSeconds");
  });

  it("travels in a bundle: exported when set, imported with the version", async () => {
    const bundle = await catalog.bundles.exportBundle(userA, { organizationId: ORG_A });
    const versions = (bundle as { prompts: { versions: Record<string, unknown>[] }[] }).prompts[0]?.versions ?? [];
    expect(versions.map((v) => v.cacheTtlSeconds)).toEqual([undefined, 90]);
    const bundleJson = JSON.stringify(bundle);
    // A bundle's bad default is refused on its field, importing nothing.
    const bad = bundleJson.replace('"cacheTtlSeconds":90', '"cacheTtlSeconds":0');
    const e = await rejectionOf(
      catalog.bundles.importBundle(userB, { organizationId: ORG_B, bundleJson: bad, dryRun: false }),
    );
    expect(e.details).toContainEqual(expect.objectContaining({ field: expect.stringMatching(/cacheTtlSeconds$/) }));
    expect(await catalog.collections.promptVersions.find({ organizationId: ORG_B })).toEqual([]);
    const r = await catalog.bundles.importBundle(userB, { organizationId: ORG_B, bundleJson, dryRun: false });
    await catalog.bundles.finishImport(userB, { organizationId: ORG_B, importId: r.importId, commit: true });
    const imported = await catalog.collections.promptVersions.find({ organizationId: ORG_B }, { sort: { version: 1 } });
    expect(imported.map((v) => v.cacheTtlSeconds)).toEqual([undefined, 90]);
  });

  it("refuses 0, 604801, 1.5 and NaN with 400 on cacheTtlSeconds, creating nothing", async () => {
    const before = await snapshotOf(catalog.collections);
    for (const cacheTtlSeconds of [0, 604_801, 1.5, Number.NaN, -5]) {
      const e = await rejectionOf(
        catalog.prompts.createPromptVersion(userA, { promptId, systemPrompt: "x", tools: [], cacheTtlSeconds }),
      );
      expect(e.kind).toBe("invalid_argument");
      expect(e.details).toEqual([{ field: "cacheTtlSeconds", issue: "must be an integer from 1 to 604800 (seconds)" }]);
    }
    expect(await snapshotOf(catalog.collections)).toEqual(before);
    // Its bounds are accepted.
    for (const cacheTtlSeconds of [1, 604_800]) {
      await catalog.prompts.createPromptVersion(userA, { promptId, systemPrompt: "x", tools: [], cacheTtlSeconds });
    }
  });
});

describe("a prompt label's default", () => {
  it("is set by the move naming it, listed with the label, and kept by a move that does not name it", async () => {
    const staged = await setLabel("staging", v2, { cacheTtlSeconds: 30 });
    expect(staged).toMatchObject({ label: "staging", versionId: v2, cacheTtlSeconds: 30 });
    // Moving it again without the field keeps the default.
    expect((await setLabel("staging", v1, {})).cacheTtlSeconds).toBe(30);
    const labels = await catalog.labels.listLabels(userA, { kind: "prompt", parentId: promptId });
    expect(labels.map((l) => [l.label, l.cacheTtlSeconds])).toEqual([
      ["production", undefined],
      ["latest", undefined],
      ["staging", 30],
    ]);
    // Many parents at once answer the same.
    const many = await catalog.labels.listLabels(userA, { kind: "prompt", parentId: "", parentIds: [promptId] });
    expect(many).toEqual(labels);
  });

  it("is answered by a resolve through the label, production for the live version, never by version id", async () => {
    await setLabel("staging", v2, { cacheTtlSeconds: 30 });
    expect((await resolve({ label: "staging" })).labelCacheTtlSeconds).toBe(30);
    expect((await resolve({ versionId: v2 })).labelCacheTtlSeconds).toBeUndefined();
    // The live version is cached by this replica: setting production's default forgets it.
    expect((await resolve()).labelCacheTtlSeconds).toBeUndefined();
    await setLabel("production", v1, { cacheTtlSeconds: 600 });
    expect((await resolve()).labelCacheTtlSeconds).toBe(600);
    expect((await resolve({ label: "production" })).labelCacheTtlSeconds).toBe(600);
    expect((await resolve({ versionId: v1 })).labelCacheTtlSeconds).toBeUndefined();
    expect((await resolve({ label: "latest" })).labelCacheTtlSeconds).toBeUndefined();
    // Moving production (publishing v2) keeps its default; the version's own stays the version's.
    await setLabel("production", v2, {});
    const live = await resolve();
    expect(live.version._id).toBe(v2);
    expect(live.labelCacheTtlSeconds).toBe(600);
    expect(live.version.cacheTtlSeconds).toBe(90);
  });

  it("is cleared by clearCacheTtlSeconds and when the label is removed", async () => {
    await setLabel("staging", v2, { cacheTtlSeconds: 30 });
    expect((await setLabel("staging", v2, { clearCacheTtlSeconds: true })).cacheTtlSeconds).toBeUndefined();
    expect((await resolve({ label: "staging" })).labelCacheTtlSeconds).toBeUndefined();
    await setLabel("staging", v2, { cacheTtlSeconds: 45 });
    const removed = await catalog.labels.deleteLabel(userA, { kind: "prompt", parentId: promptId, label: "staging" });
    expect(removed.cacheTtlSeconds).toBe(45);
    // Made again, it starts without one.
    expect((await setLabel("staging", v2, {})).cacheTtlSeconds).toBeUndefined();
  });

  it("is not read from the prototype of the map (a label named constructor)", async () => {
    await setLabel("staging", v2, { cacheTtlSeconds: 30 });
    await setLabel("constructor", v2, {});
    expect((await resolve({ label: "constructor" })).labelCacheTtlSeconds).toBeUndefined();
    expect((await resolve({ label: "staging" })).labelCacheTtlSeconds).toBe(30);
  });

  it("refuses a bad default, set and clear at once, and a skill's label, with 400 on cacheTtlSeconds, changing nothing", async () => {
    await setLabel("staging", v2, { cacheTtlSeconds: 30 });
    const { skill } = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name: "S", description: "" });
    const before = await snapshotOf(catalog.collections);
    const refusals = [
      ...[0, 604_801, 1.5, Number.NaN].map((cacheTtlSeconds) => setLabel("staging", v1, { cacheTtlSeconds })),
      setLabel("staging", v1, { cacheTtlSeconds: 10, clearCacheTtlSeconds: true }),
      setLabel("production", v2, { cacheTtlSeconds: 0 }),
      catalog.labels.setLabel(userA, {
        kind: "skill",
        parentId: skill._id,
        label: "staging",
        versionId: "sv_x",
        cacheTtlSeconds: 30,
      }),
    ];
    for (const refused of refusals) {
      const e = await rejectionOf(refused);
      expect(e.kind).toBe("invalid_argument");
      expect(e.details.map((d) => d.field)).toEqual(["cacheTtlSeconds"]);
    }
    expect(await snapshotOf(catalog.collections)).toEqual(before);
  });
});
