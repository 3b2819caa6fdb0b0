/**
 * `pnpm bench:import`: how long an import of a large bundle takes in the embedded platform — a dry
 * run, the import, the same import again (all skipped), and the export — in memory and on the
 * durable store (LMDB). BENCH_IMPORT_PROMPTS (default 1000) prompts of three versions each.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IN_MEMORY, openEmbeddedData } from "@kiln/launcher/data-dir";
import { createTestClient } from "@kiln/testing/test-client";
import { startEmbedded } from "../support/embedded.js";

const N = Number(process.env.BENCH_IMPORT_PROMPTS ?? 1000);
const dir = mkdtempSync(join(tmpdir(), "kiln-bench-import-"));
for (const location of [IN_MEMORY, dir]) {
  process.stdout.write(`\n${location === IN_MEMORY ? "in memory" : "LMDB"}: ${N} prompts × 3 versions\n`);
  const { kiln, baseUrl } = await startEmbedded({ data: await openEmbeddedData(location) });
  const api = createTestClient(baseUrl);
  const token = (await api.signUp()).accessToken;
  const org = (await api.onboard(token)).organization.id;
  const t0 = Date.now();
  const id = (p: string, i: number) => `${p}_${i.toString(16).padStart(32, "0")}`;
  const schema = { type: "object", properties: { x: { type: "string" } }, required: ["x"] };
  const bundle = {
    format: "kiln.bundle/v1",
    tools: [],
    prompts: Array.from({ length: N }, (_, i) => ({
      id: id("prm", i),
      name: `p${i}`,
      description: "",
      defaultModel: null,
      createdAt: new Date(t0).toISOString(),
      labels: { production: 2 },
      versions: [1, 2, 3].map((v) => ({
        id: id("pv", i * 10 + v),
        version: v,
        status: v < 3 ? "published" : "draft",
        createdAt: new Date(t0 + v).toISOString(),
        publishedAt: v < 3 ? new Date(t0 + v).toISOString() : null,
        systemPrompt: `Say {{x}} ${v}`,
        developerPrompt: null,
        variablesSchema: schema,
        responseFormat: { type: "text" },
        temperature: null,
        maxOutputTokens: null,
        model: "local/echo",
        tools: [],
      })),
    })),
    skills: [],
    agents: [],
  };
  process.stdout.write(`bundle: ${(JSON.stringify(bundle).length / 1_048_576).toFixed(1)} MB\n`);
  for (const query of ["?dryRun=true", "", ""]) {
    const t = Date.now();
    const r = await api.post<{ summary: unknown }>(`/api/organizations/${org}/import${query}`, bundle, { token });
    process.stdout.write(
      `${query ? "dry run" : "import"}: ${r.status} ${JSON.stringify(r.body.summary)} ${Date.now() - t} ms\n`,
    );
  }
  const t = Date.now();
  const e = await api.get(`/api/organizations/${org}/export`, { token });
  process.stdout.write(`export: ${e.status} ${Date.now() - t} ms\n`);
  await kiln.close();
}
rmSync(dir, { recursive: true, force: true });
