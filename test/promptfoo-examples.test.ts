/**
 * The five layouts of promptfoo's own examples (test/fixtures/promptfoo/<name>/: getting-started,
 * JSON output with transforms, provider comparison, CSV tests with file:// prompts, rubric
 * grading) imported with `kiln import` from disk, the files they refer to sent along (issue #34,
 * docs/bundles.md "promptfoo"): every warning asserted, the files' prompts and tests imported, a
 * missing file reported for its item alone, a dry run naming no id it would draw.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { API_KEY_SCOPES } from "@kiln/contracts/api-key-scopes";
import { bundleCommand } from "@kiln/launcher/bundle-command";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded } from "./support/embedded.js";

type Case = { name: string; input: Record<string, unknown>; assertions: Record<string, unknown>[] };
type Item = { kind: string; id: string | null; name: string; outcome: string; detail?: string };

const example = (name: string) =>
  join(fileURLToPath(new URL(`./fixtures/promptfoo/${name}`, import.meta.url)), "promptfooconfig.yaml");
const echo = (id: string) => `${id} is not a model here; its versions use local/echo`;

describe("promptfoo's examples imported from the CLI with their files", () => {
  let kiln: Awaited<ReturnType<typeof startEmbedded>>;
  let api: TestClient;
  let token: string;
  let org: string;
  let key: string;

  beforeAll(async () => {
    kiln = await startEmbedded();
    api = createTestClient(kiln.baseUrl);
    token = (await api.signUp()).accessToken;
    org = (await api.onboard(token)).organization.id;
    key = (await api.createApiKey(token, org, [...API_KEY_SCOPES])).key;
  });
  afterAll(() => kiln?.kiln.close());

  /** `kiln import` of a file: its exit code, its warnings, its summary line, and the report's items. */
  async function cliImport(file: string, ...flags: string[]) {
    return cliImportWith(key, file, ...flags);
  }
  async function cliImportWith(apiKey: string, file: string, ...flags: string[]) {
    const lines: string[] = [];
    const items: Item[] = [];
    const fetchSpy: typeof fetch = async (url, init) => {
      const res = await fetch(url, init);
      if (String(url).includes("/import")) items.push(...((await res.clone().json()) as { items: Item[] }).items);
      return res;
    };
    const io = { env: { KILN_API_KEY: apiKey, KILN_URL: kiln.baseUrl }, progress: (l: string) => lines.push(l) };
    const code = await bundleCommand("import", [file, ...flags], { ...io, out: () => {}, fetch: fetchSpy });
    const warnings = lines.filter((l) => l.startsWith("  warning: ")).map((l) => l.slice("  warning: ".length));
    return { code, lines, warnings, summary: lines.at(-1), items };
  }
  const casesOf = async (items: Item[], name: string) => {
    const skill = items.find((i) => i.kind === "skill" && i.name === `promptfoo: ${name}`);
    const r = await api.get<{ data: Case[] }>(`/api/skills/${skill?.id}/evaluation-cases?organizationId=${org}`, {
      token,
    });
    // In the order of their names (the list is the newest first).
    return r.body.data.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  };

  it("getting-started: two prompts × two providers, contains and icontains; a dry run names no new ids", async () => {
    const dry = await cliImport(example("getting-started"), "--dry-run");
    expect(dry.summary).toBe("dry run: would create 8, update 0, skipped 0, conflicts 0");
    expect(dry.items.every((i) => i.id === null && i.detail === "its id is assigned at import")).toBe(true);
    const r = await cliImport(example("getting-started"));
    expect(r.code).toBe(0);
    expect(r.summary).toBe("created 8, updated 0, skipped 0, conflicts 0");
    expect(r.warnings).toEqual([echo("providers[0]: openai:gpt-4.1"), echo("providers[1]: openai:o4-mini")]);
    const cases = await casesOf(r.items, "Translate to {{language}}: {{input}}");
    expect(cases.map((c) => c.assertions)).toEqual([
      [{ type: "contains", value: "Bonjour le monde" }],
      [{ type: "regex", pattern: "Dónde está la biblioteca", flags: "i" }],
    ]);
    // After the import, a dry run names the ids it made (skipped).
    const again = await cliImport(example("getting-started"), "--dry-run");
    expect(again.items.map((i) => i.id)).toEqual(r.items.map((i) => i.id));
  });

  it("JSON output with transforms: is-json with its schema; every transform and javascript reported", async () => {
    const r = await cliImport(example("json-output"));
    expect(r.summary).toBe("created 4, updated 0, skipped 0, conflicts 0");
    expect(r.warnings).toEqual([
      echo("providers[0]: openai:chat:gpt-3.5-turbo"),
      "tests[1].options.transform is not imported (Kiln's assertions check the output as the model gives it)",
      "tests[0].assert[1]: javascript is not imported (Kiln runs no code in assertions)",
      "tests[1].assert[1]: javascript is not imported (Kiln runs no code in assertions)",
      "tests[1].assert[2].transform is not imported (Kiln's assertions check the output as the model gives it)",
    ]);
    const [banana, passion] = await casesOf(r.items, r.items.find((i) => i.kind === "prompt")?.name ?? "");
    expect(banana?.assertions).toEqual([
      { type: "json_schema", schema: { type: ["object", "array", "number", "boolean", "null"] } },
    ]);
    expect(passion?.assertions[0]).toMatchObject({ type: "json_schema", schema: { required: ["color", "countries"] } });
    expect(passion?.assertions[1]).toEqual({ type: "regex", pattern: "Guatemala|Costa Rica|India|Indonesia" });
  });

  it("provider comparison: one version and label per provider, defaultTest's cost and latency in every case", async () => {
    const r = await cliImport(example("provider-comparison"));
    expect(r.summary).toBe("created 7, updated 0, skipped 0, conflicts 0");
    expect(r.warnings).toEqual([
      echo("providers[0]: openai:chat:gpt-5.4"),
      echo("providers[1]: openai:chat:gpt-5.4-mini"),
    ]);
    const prompt = r.items.find((i) => i.kind === "prompt");
    const labels = await api.get<{ data: { label: string; version: number }[] }>(`/api/prompts/${prompt?.id}/labels`, {
      token,
    });
    expect(Object.fromEntries(labels.body.data.map((l) => [l.label, l.version]))).toMatchObject({
      production: 1,
      "openai-chat-gpt-5-4": 1,
      "openai-chat-gpt-5-4-mini": 2,
    });
    const cases = await casesOf(r.items, prompt?.name ?? "");
    expect(cases).toHaveLength(5);
    for (const c of cases) {
      expect(c.assertions.slice(0, 2)).toEqual([
        { type: "max_cost_usd", value: 0.01 },
        { type: "max_latency_ms", value: 10000 },
      ]);
    }
    expect(cases[0]?.assertions[3]).toEqual({ type: "llm_judge", rubric: "Do not apologize" });
  });

  it("CSV tests with file:// prompts: both prompts of prompts.txt, the rows as cases, load() left as text", async () => {
    const r = await cliImport(example("csv-file-prompts"));
    expect(r.lines).toContainEqual(expect.stringMatching(/^importing .*promptfooconfig\.yaml \(2 referenced files, /));
    expect(r.summary).toBe("created 12, updated 0, skipped 0, conflicts 0");
    const at = "prompts[0] (prompts.txt prompt 1)";
    const kept =
      "is a Nunjucks expression Kiln's Mustache templates cannot evaluate; it stays as text (not a variable)";
    expect(r.warnings).toEqual([
      `${at}: {{ (style_config | load).tone }} ${kept}`,
      `${at}: {{ (style_config | load).length }} ${kept}`,
      echo("providers[0]: openai:gpt-3.5-turbo"),
    ]);
    const first = r.items.find((i) => i.kind === "prompt" && i.name === "prompts.txt (1)");
    const view = await api.get<{ version: { systemPrompt: string; variablesSchema: { properties: object } } }>(
      `/api/prompts/${first?.id}`,
      { token },
    );
    expect(view.body.version.systemPrompt).toContain("- Tone: {{=<% %>=}}{{ (style_config | load).tone }}<%={{ }}=%>");
    expect(Object.keys(view.body.version.variablesSchema.properties)).toEqual(["body", "language"]);
    const cases = await casesOf(r.items, "prompts.txt (2)");
    expect(cases.map((c) => [c.input.language, c.input.body, c.assertions])).toEqual([
      ["French", "Hello world", [{ type: "regex", pattern: "bonjour", flags: "i" }]],
      ["French", "I'm hungry", [{ type: "regex", pattern: "faim", flags: "i" }]],
      ["Pirate", "Hello world", [{ type: "regex", pattern: "Ahoy", flags: "i" }]],
      ["Pirate", "I'm hungry", [{ type: "regex", pattern: "grub", flags: "i" }]],
    ]);
    // The Nunjucks expression reaches the model as it is written.
    const run = await api.post<{ output: unknown }>(
      `/api/prompts/${first?.id}/run`,
      { organizationId: org, variables: { language: "French", body: "Hello world" } },
      { token },
    );
    expect(run.status, run.text).toBe(201);
  });

  it("rubric grading: tests in YAML and JSONL files, a rubric file, the grader as the judge's model; metric, threshold, metadata reported", async () => {
    const r = await cliImport(example("rubric-grading"));
    expect(r.lines).toContain("  not sent: file://topics/housing.txt (not found, or past the size limit)");
    expect(r.summary).toBe("created 5, updated 0, skipped 0, conflicts 0");
    expect(r.warnings).toEqual([
      echo("providers[0]: openai:gpt-4o-mini"),
      "defaultTest.options.rubricPrompt is not imported (Kiln's judge uses its own grading prompt)",
      "tests.yaml[0].metadata is not imported (Kiln's evaluation cases have no metadata)",
      "tests.yaml[0].threshold is not imported (every Kiln assertion must pass)",
      "more-tests.jsonl:2.vars.topic: file://topics/housing.txt was not given with the config (import from the CLI or send it in files); the test is skipped",
      "tests[0].assert[0]: llm-rubric is not imported (no rubric)",
      'tests.yaml[0].assert[0].metric "Coverage" is not imported (Kiln reports each assertion by its place)',
      'more-tests.jsonl:1.assert[0].metric "Coverage" is not imported (Kiln reports each assertion by its place)',
      "defaultTest.options.provider: the grader openai:gpt-4o is not a model here; the judge uses Kiln's default model",
    ]);
    const cases = await casesOf(r.items, "prompts.txt");
    expect(cases.map((c) => [c.name, c.input.topic, c.assertions])).toEqual([
      [
        "Inflation",
        "inflation",
        [
          {
            type: "llm_judge",
            rubric: "The output mentions prices, describes purchasing power and asks to clarify the time frame.\n",
            model: "local/echo",
            threshold: 0.7,
          },
        ],
      ],
      ["Trade", "international trade\n", [{ type: "llm_judge", rubric: "Mentions tariffs" }]],
      ["test 1", "the economy", []],
    ]);
  });

  it("a file that was not sent is reported for its item; the rest of the config imports", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kiln-promptfoo-"));
    try {
      cpSync(join(example("csv-file-prompts"), ".."), dir, { recursive: true });
      rmSync(join(dir, "tests.csv"));
      const config = "prompts:\n  - file://prompts.txt\n  - file://prompts/v2.txt\ntests: file://tests.csv\n";
      writeFileSync(join(dir, "promptfooconfig.yaml"), config);
      // Into another organization: the same prompts with another provider are other versions.
      const otherToken = (await api.signUp()).accessToken;
      const other = (await api.onboard(otherToken)).organization.id;
      const otherKey = (await api.createApiKey(otherToken, other, [...API_KEY_SCOPES])).key;
      const r = await cliImportWith(otherKey, join(dir, "promptfooconfig.yaml"));
      expect(r.code).toBe(0);
      const missing = "was not given with the config (import from the CLI or send it in files)";
      expect(r.warnings).toContain(`prompts[1]: file://prompts/v2.txt ${missing}; the prompt is skipped`);
      expect(r.warnings).toContain(`tests: file://tests.csv ${missing}; its tests are skipped`);
      expect(r.items.filter((i) => i.kind === "prompt").map((i) => i.name)).toEqual([
        "prompts.txt (1)",
        "prompts.txt (2)",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
