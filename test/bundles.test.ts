/**
 * Export and import (issue #18, docs/bundles.md) over real HTTP: an organization built on the
 * embedded platform is exported, imported into an organization of the distributed platform (dry
 * run first), exported again (the same bundle but for ids), imported again (nothing changes), and
 * its prompts run the same. Conflicts, invalid bundles and a failure in the evaluation service's
 * part leave nothing behind.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { API_KEY_SCOPES } from "@kiln/contracts/api-key-scopes";
import { BundleSchema } from "@kiln/contracts/bundle";
import { createSchemaAjv } from "@kiln/contracts/schema-ajv";
import { bundleCommand } from "@kiln/launcher/bundle-command";
import { createPublishedAgent } from "@kiln/testing/agent-fixture";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { twoVersionSkill } from "./support/evaluation-fixture.js";

type Bundle = {
  format: string;
  exportedAt?: string;
  organization?: { id: string; name: string };
  tools: { id: string; toolKey: string }[];
  prompts: { id: string; name: string; labels: Record<string, number>; versions: { id: string }[] }[];
  skills: { id: string; evaluationCases: { id: string }[]; labels: Record<string, number> }[];
  agents: { id: string }[];
};
type Report = {
  dryRun: boolean;
  summary: { created: number; updated: number; skipped: number; conflicts: number };
  items: { kind: string; sourceId: string; id: string | null; outcome: string; detail?: string }[];
  warnings: string[];
};

const ID = /^(?:tool|tv|prm|pv|skl|sv|agt|av|evc)_[0-9a-f]{32}$/;

/** The bundle with every id replaced by its order of first appearance, and no export metadata. */
function canonical(bundle: Bundle): unknown {
  const names = new Map<string, string>();
  const walk = (v: unknown): unknown => {
    if (typeof v === "string" && ID.test(v)) {
      if (!names.has(v)) names.set(v, `id#${names.size}`);
      return names.get(v);
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  const { exportedAt: _a, organization: _o, ...rest } = bundle;
  return walk(rest);
}

describe("export and import between an embedded and a distributed platform", () => {
  let a: Awaited<ReturnType<typeof startEmbedded>>;
  let b: Awaited<ReturnType<typeof startDistributed>>;
  let apiA: TestClient;
  let apiB: TestClient;
  let tokenA: string;
  let tokenB: string;
  let orgA: string;
  let orgB: string;
  let exported: Bundle;
  let promptA: string;

  const exportOf = async (api: TestClient, token: string, org: string) => {
    const r = await api.get<Bundle>(`/api/organizations/${org}/export`, { token });
    expect(r.status, r.text).toBe(200);
    return r.body;
  };
  const importInto = (api: TestClient, token: string, org: string, body: unknown, query = "") =>
    api.post<Report>(`/api/organizations/${org}/import${query}`, body, { token });

  beforeAll(async () => {
    [a, b] = await Promise.all([
      startEmbedded(),
      startDistributed({ mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") }),
    ]);
    apiA = createTestClient(a.baseUrl);
    apiB = createTestClient(b.gatewayUrl);
    tokenA = (await apiA.signUp()).accessToken;
    orgA = (await apiA.onboard(tokenA)).organization.id;
    tokenB = (await apiB.signUp()).accessToken;
    orgB = (await apiB.onboard(tokenB)).organization.id;

    // Organization A: a tool, prompts with labels, a skill with a draft and cases, an agent.
    const fixture = await createPublishedAgent(apiA, tokenA, orgA);
    const skill = await twoVersionSkill(
      apiA,
      { token: tokenA, organizationId: orgA },
      {
        name: "Greeter",
        model: "local/echo",
        published: "Hello {{name}}",
        draft: "Hi {{name}}!",
      },
    );
    const cases = await apiA.createEvaluationCases(tokenA, orgA, skill.skillId, [
      { name: "Ada", input: { name: "Ada" }, assertions: [{ type: "contains", value: "Ada" }] },
      { name: "Bob", input: { name: "Bob" }, expectedOutput: "Hello Bob" },
    ]);
    expect(cases.length).toBe(2);
    const prompt = await apiA.createPublishedPrompt(tokenA, orgA, {
      systemPrompt: "Summarize {{text}}",
      variablesSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      tools: [{ toolId: fixture.toolId }],
    });
    promptA = prompt.prompt.id;
    const v2 = await apiA.createPromptVersion(tokenA, promptA, {
      systemPrompt: "Summarize briefly: {{text}}",
      variablesSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    });
    const staged = await apiA.request("PUT", `/api/prompts/${promptA}/labels/staging`, {
      token: tokenA,
      body: { versionId: v2.id },
    });
    expect(staged.status, staged.text).toBe(200);
    exported = await exportOf(apiA, tokenA, orgA);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.kiln.close(), b?.stop()]);
  });

  it("exports every prompt, tool, skill and agent with versions, labels and cases, as the schema describes", () => {
    const documented = JSON.parse(readFileSync(new URL("../docs/bundle.schema.json", import.meta.url), "utf8"));
    expect(documented).toEqual(JSON.parse(JSON.stringify(BundleSchema)));
    const validate = createSchemaAjv().compile(documented);
    expect(validate(exported), JSON.stringify(validate.errors)).toBe(true);
    expect(exported.format).toBe("kiln.bundle/v1");
    expect(exported.organization?.id).toBe(orgA);
    expect(exported.tools).toHaveLength(1);
    expect(exported.prompts).toHaveLength(5);
    expect(exported.skills).toHaveLength(1);
    expect(exported.skills[0]?.evaluationCases).toHaveLength(2);
    expect(exported.agents).toHaveLength(1);
    const labelled = exported.prompts.find((p) => p.id === promptA);
    expect(labelled?.labels).toEqual({ production: 1, staging: 2 });
    // Never secrets, runs or members.
    const text = JSON.stringify(exported);
    expect(text).not.toMatch(/sk_[A-Za-z0-9]+_|"password|"runs"|"members"|"email"/);
  });

  it("a dry run reports what would be created and creates nothing", async () => {
    const r = await importInto(apiB, tokenB, orgB, exported, "?dryRun=true");
    expect(r.status, r.text).toBe(200);
    expect(r.body.dryRun).toBe(true);
    expect(r.body.summary).toEqual({ created: 10, updated: 0, skipped: 0, conflicts: 0 });
    const after = await exportOf(apiB, tokenB, orgB);
    expect([after.tools, after.prompts, after.skills, after.agents]).toEqual([[], [], [], []]);
  });

  it("imports into another platform: the export there is the same bundle with other ids", async () => {
    const r = await importInto(apiB, tokenB, orgB, exported);
    expect(r.status, r.text).toBe(200);
    expect(r.body.summary).toEqual({ created: 10, updated: 0, skipped: 0, conflicts: 0 });
    const again = await exportOf(apiB, tokenB, orgB);
    expect(again.prompts[0]?.id).not.toBe(exported.prompts[0]?.id);
    expect(canonical(again)).toEqual(canonical(exported));
  });

  it("importing the same bundle twice changes nothing", async () => {
    const before = await exportOf(apiB, tokenB, orgB);
    const r = await importInto(apiB, tokenB, orgB, exported);
    expect(r.status, r.text).toBe(200);
    expect(r.body.summary).toEqual({ created: 0, updated: 0, skipped: 10, conflicts: 0 });
    const after = await exportOf(apiB, tokenB, orgB);
    const { exportedAt: _x, ...b1 } = before;
    const { exportedAt: _y, ...b2 } = after;
    expect(b2).toEqual(b1);
    // Its own export imported back is the same things too.
    const self = await importInto(apiB, tokenB, orgB, after);
    expect(self.body.summary).toEqual({ created: 0, updated: 0, skipped: 10, conflicts: 0 });
  });

  it("an imported prompt runs as the original does (local/echo), by label too", async () => {
    const target = (await importInto(apiB, tokenB, orgB, exported, "?dryRun=true")).body.items.find(
      (i) => i.sourceId === promptA,
    );
    expect(target?.id).toMatch(/^prm_/);
    for (const label of [undefined, "staging"]) {
      const body = { variables: { text: "the quarterly report" }, ...(label && { label }) };
      const ra = await apiA.post<{ output: unknown }>(
        `/api/prompts/${promptA}/run`,
        { organizationId: orgA, ...body },
        { token: tokenA },
      );
      const rb = await apiB.post<{ output: unknown }>(
        `/api/prompts/${target?.id}/run`,
        { organizationId: orgB, ...body },
        { token: tokenB },
      );
      expect(ra.status, ra.text).toBe(201);
      expect(rb.status, rb.text).toBe(201);
      expect(rb.body.output).toEqual(ra.body.output);
    }
  });

  it("a later version in the source is added on the next import (updated), the rest skipped", async () => {
    const v3 = await apiA.createPromptVersion(tokenA, promptA, {
      systemPrompt: "Summarize in one line: {{text}}",
      variablesSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    });
    await apiA.publishPrompt(tokenA, promptA, v3.id);
    const next = await exportOf(apiA, tokenA, orgA);
    const r = await importInto(apiB, tokenB, orgB, next);
    expect(r.status, r.text).toBe(200);
    expect(r.body.summary).toEqual({ created: 0, updated: 1, skipped: 9, conflicts: 0 });
    expect(r.body.items.find((i) => i.outcome === "updated")).toMatchObject({
      sourceId: promptA,
      detail: "1 new version(s)",
    });
    expect(canonical(await exportOf(apiB, tokenB, orgB))).toEqual(canonical(next));
    exported = next;
  });

  it("a conflict (a tool key taken by another tool) refuses the whole import; a dry run lists it", async () => {
    const token = (await apiB.signUp()).accessToken;
    const org = (await apiB.onboard(token)).organization.id;
    await apiB.createTool(token, org, { toolKey: exported.tools[0]?.toolKey, name: "Mine" });
    const before = await exportOf(apiB, token, org);
    const dry = await importInto(apiB, token, org, exported, "?dryRun=true");
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body.summary.conflicts).toBe(1);
    expect(dry.body.items.find((i) => i.outcome === "conflict")).toMatchObject({ kind: "tool", id: null });
    const r = await importInto(apiB, token, org, exported);
    expect(r.status, r.text).toBe(409);
    expect(r.body).toMatchObject({ error: { code: "failed_precondition", details: [{ field: "tools[0]" }] } });
    const { exportedAt: _x, ...b1 } = before;
    const { exportedAt: _y, ...b2 } = await exportOf(apiB, token, org);
    expect(b2).toEqual(b1);
  });

  it("an invalid bundle is a 400 naming the place, and changes nothing", async () => {
    const token = (await apiA.signUp()).accessToken;
    const org = (await apiA.onboard(token)).organization.id;
    const broken = structuredClone(exported) as unknown as { prompts: { versions: { systemPrompt: unknown }[] }[] };
    const first = broken.prompts[1]?.versions[0];
    if (first) first.systemPrompt = 42;
    const r = await importInto(apiA, token, org, broken);
    expect(r.status, r.text).toBe(400);
    expect(r.body).toMatchObject({
      error: { code: "invalid_argument", details: [{ field: "prompts[1].versions[0].systemPrompt" }] },
    });
    const unknown = await importInto(apiA, token, org, { ...exported, format: "something/v9" });
    expect(unknown.status).toBe(400);
    const badTemplate = structuredClone(exported) as unknown as { prompts: { versions: { systemPrompt: string }[] }[] };
    const v = badTemplate.prompts[1]?.versions[0];
    if (v) v.systemPrompt = "Hello {{undeclared}}";
    const semantic = await importInto(apiA, token, org, badTemplate);
    expect(semantic.status, semantic.text).toBe(400);
    expect(semantic.body).toMatchObject({ error: { details: [{ field: "prompts[1].versions[0].systemPrompt" }] } });
    const after = await exportOf(apiA, token, org);
    expect([after.tools, after.prompts, after.skills, after.agents]).toEqual([[], [], [], []]);
  });

  it("when the evaluation cases fail after the catalog's part was written, the catalog's part is undone", async () => {
    const token = (await apiB.signUp()).accessToken;
    const org = (await apiB.onboard(token)).organization.id;
    const bad = structuredClone(exported) as unknown as { skills: { evaluationCases: { assertions: unknown[] }[] }[] };
    const k = bad.skills[0]?.evaluationCases[0];
    if (k) k.assertions = [{ type: "regex", pattern: "(a+)+\\1" }];
    const r = await importInto(apiB, token, org, bad);
    expect(r.status, r.text).toBe(400);
    expect(r.body).toMatchObject({
      error: { details: [{ field: "skills[0].evaluationCases[0].assertions[0].pattern" }] },
    });
    const after = await exportOf(apiB, token, org);
    expect([after.tools, after.prompts, after.skills, after.agents]).toEqual([[], [], [], []]);
    // And the same bundle, fixed, imports whole afterwards.
    const ok = await importInto(apiB, token, org, exported);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.summary.created).toBe(10);
  });

  it("kiln export and kiln import move a bundle with an API key from the environment", async () => {
    const keyA = (await apiA.createApiKey(tokenA, orgA, [...API_KEY_SCOPES])).key;
    const token = (await apiB.signUp()).accessToken;
    const org = (await apiB.onboard(token)).organization.id;
    const keyB = (await apiB.createApiKey(token, org, [...API_KEY_SCOPES])).key;
    const dir = mkdtempSync(join(tmpdir(), "kiln-bundle-"));
    const file = join(dir, "a.json");
    const lines: string[] = [];
    const io = (key: string, url: string) => ({
      env: { KILN_API_KEY: key, KILN_URL: url },
      progress: (line: string) => lines.push(line),
      out: () => {},
    });
    expect(await bundleCommand("export", ["--out", file], io(keyA, a.baseUrl))).toBe(0);
    expect(lines.at(-1)).toMatch(new RegExp(`^exported ${orgA}: 5 prompts, 1 tools, 1 skills, 1 agents → `));
    expect(await bundleCommand("import", [file, "--dry-run"], io(keyB, b.gatewayUrl))).toBe(0);
    expect(lines.at(-1)).toBe("dry run: would create 10, update 0, skipped 0, conflicts 0");
    expect(lines).toContainEqual(
      expect.stringMatching(/^importing .*a\.json \(8 prompts, tools, skills and agents, \d+\.\d MB\) into /),
    );
    expect(await bundleCommand("import", [file], io(keyB, b.gatewayUrl))).toBe(0);
    expect(lines.at(-1)).toBe("created 10, updated 0, skipped 0, conflicts 0");
    const yaml = join(dir, "promptfooconfig.yaml");
    writeFileSync(yaml, "prompts: ['Say {{word}}']\ntests:\n  - vars: {word: hi}\n");
    expect(await bundleCommand("import", [yaml], io(keyB, b.gatewayUrl))).toBe(0);
    expect(lines.at(-1)).toBe("created 3, updated 0, skipped 0, conflicts 0");
    await expect(bundleCommand("import", [], io(keyB, b.gatewayUrl))).rejects.toThrow(/usage/);
    await expect(bundleCommand("export", [], { ...io("", a.baseUrl), env: {} })).rejects.toThrow(/KILN_API_KEY/);
    await expect(bundleCommand("import", [join(dir, "missing.json")], io(keyB, b.gatewayUrl))).rejects.toThrow(
      /cannot read .*missing\.json: ENOENT/,
    );
    await expect(bundleCommand("export", [], io(keyA, "http://127.0.0.1:9"))).rejects.toThrow(/cannot reach/);
  });
});
