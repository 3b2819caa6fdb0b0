/**
 * The SDK as a package user gets it: built by sdk/scripts/build.mjs (tsc: ESM and declarations,
 * sdk/tsconfig.build.json, with what it uses of @kiln/contracts compiled in) and imported by plain
 * Node (no TypeScript loader) in a child process that calls a live gateway; packed, it names no
 * workspace package.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";

const run = promisify(execFile);
const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "..", "sdk");
// Inside sdk/ so that the compiled code resolves the SDK's own dependencies (openapi-fetch).
const outDir = join(sdkDir, ".tmp", `dist-${randomUUID()}`);
const build = join(sdkDir, "scripts", "build.mjs");

/** The built files (relative paths) whose text names a workspace package. */
async function filesNamingWorkspace(dir: string): Promise<string[]> {
  const files = (await readdir(dir, { recursive: true })).filter((f) => /\.(js|d\.ts)$/.test(f));
  const texts = await Promise.all(files.map((f) => readFile(join(dir, f), "utf8")));
  return files.filter((_f, i) => /["']@kiln\//.test(texts[i] ?? ""));
}

/** A version to resolve and render with the built SDK (its dependencies ajv and Mustache included). */
const PROMPT_VERSION = {
  systemPrompt: "Weather in {{city}}.",
  developerPrompt: "Be brief.",
  variablesSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const RENDERED = [
  { role: "system", content: "Weather in Oslo <N>." },
  { role: "developer", content: "Be brief." },
];

let kiln: EmbeddedKiln;
let baseUrl: string;

beforeAll(async () => {
  ({ kiln, baseUrl } = await startEmbedded());
});

afterAll(async () => {
  await kiln?.close();
  // maxRetries: a child (npm, tsc) of a test cut off may still be writing there.
  await rm(join(sdkDir, ".tmp"), { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
});

describe("the built SDK", () => {
  it("compiles to ESM with declarations and runs on plain Node against a live gateway", async () => {
    await run(process.execPath, [build, "--out-dir", outDir]);
    expect(await readFile(join(outDir, "index.d.ts"), "utf8")).toContain("Kiln");
    // The contracts it renders with are compiled in: no import of a workspace package is left.
    expect(await readdir(join(outDir, "contracts"))).toContain("field-issues.js");
    expect(await filesNamingWorkspace(outDir)).toEqual([]);

    const api = createTestClient(baseUrl);
    const { accessToken } = await api.signUp();
    const organizationId = (await api.onboard(accessToken)).organization.id;
    const { prompt } = await api.createPublishedPrompt(accessToken, organizationId, PROMPT_VERSION);
    const script = `
      import { Kiln, KilnError } from ${JSON.stringify(pathToFileURL(join(outDir, "index.js")).href)};
      const kiln = new Kiln({ baseUrl: process.env.BASE_URL, accessToken: process.env.TOKEN });
      const models = await kiln.models.list();
      const verified = await kiln.setup.verify({ organizationId: process.env.ORG });
      const missing = await kiln.skills.get("skl_missing").catch((e) => e);
      const resolved = await kiln.prompts.resolve(process.env.PROMPT);
      const invalid = (() => { try { resolved.render({}); } catch (e) { return e; } })();
      console.log(JSON.stringify({
        models: models.data.map((m) => m.id),
        ok: verified.ok,
        error: missing instanceof KilnError ? [missing.status, missing.code] : String(missing),
        rendered: resolved.render({ city: "Oslo <N>" }).messages,
        invalid: invalid instanceof KilnError ? invalid.details : String(invalid),
      }));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      env: { PATH: process.env.PATH, BASE_URL: baseUrl, TOKEN: accessToken, ORG: organizationId, PROMPT: prompt.id },
    });
    expect(JSON.parse(stdout)).toEqual({
      models: expect.arrayContaining(["local/echo"]),
      ok: true,
      error: [404, "not_found"],
      rendered: RENDERED,
      invalid: [{ field: "variables.city", issue: "is required" }],
    });
  });

  it("packs with npm, installs from the tarball into a new project, type-checks and runs there", async () => {
    const scratch = join(sdkDir, ".tmp", `scratch-${randomUUID()}`);
    await mkdir(scratch, { recursive: true });
    // npm pack runs the package's prepack (the build) and packs what `files` lists.
    const { stdout: packed } = await run("npm", ["pack", "--json", "--pack-destination", scratch], { cwd: sdkDir });
    const [tarball] = JSON.parse(packed) as { filename: string; files: { path: string }[] }[];
    const files = tarball?.files.map((f) => f.path) ?? [];
    expect(files).toEqual(expect.arrayContaining(["dist/index.js", "dist/index.d.ts", "package.json", "README.md"]));
    expect(files.filter((f) => f.startsWith("src/"))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(["dist/contracts/field-issues.js"]));

    await writeFile(join(scratch, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
    await run(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        join(scratch, tarball?.filename ?? ""),
        "typescript@5.9.3",
        "@types/node@20.19.43",
      ],
      { cwd: scratch },
    );
    // What npm installed: the SDK and its npm dependencies, no workspace package.
    const installed = join(scratch, "node_modules", "@kiln");
    expect(await readdir(installed)).toEqual(["sdk"]);
    const manifest = JSON.parse(await readFile(join(installed, "sdk", "package.json"), "utf8")) as Record<
      string,
      Record<string, string> | undefined
    >;
    const needs = ["dependencies", "peerDependencies", "optionalDependencies"].flatMap((k) =>
      Object.keys(manifest[k] ?? {}),
    );
    expect(needs.filter((name) => name.startsWith("@kiln/"))).toEqual([]);
    expect(await filesNamingWorkspace(join(installed, "sdk", "dist"))).toEqual([]);
    await writeFile(
      join(scratch, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          outDir: "out",
          types: ["node"],
        },
        include: ["main.ts"],
      }),
    );
    await writeFile(
      join(scratch, "main.ts"),
      `import { Kiln, KilnError, type Assertion, type PromptMessage } from "@kiln/sdk";
const kiln = new Kiln({ baseUrl: process.env.BASE_URL ?? "", accessToken: process.env.TOKEN ?? "" });
const models = await kiln.models.list();
const verified = await kiln.setup.verify({ organizationId: process.env.ORG ?? "" });
const missing = await kiln.skills.get("skl_missing").catch((e: unknown) => e);
const assertion: Assertion = { type: "contains", value: "hello" };
const resolved = await kiln.prompts.resolve(process.env.PROMPT ?? "", { cacheTtlMs: 1_000 });
const messages: PromptMessage[] = resolved.render({ city: "Oslo <N>" }).messages;
console.log(JSON.stringify({
  models: models.data.map((m) => m.id),
  ok: verified.ok,
  error: missing instanceof KilnError ? [missing.status, missing.code] : String(missing),
  assertion: assertion.type,
  rendered: messages,
}));
`,
    );
    // Type-checks and compiles against the installed declarations, then runs on plain Node.
    await run(process.execPath, [join(scratch, "node_modules/typescript/bin/tsc"), "-p", scratch]);
    const api = createTestClient(baseUrl);
    const { accessToken } = await api.signUp();
    const organizationId = (await api.onboard(accessToken)).organization.id;
    const { prompt } = await api.createPublishedPrompt(accessToken, organizationId, PROMPT_VERSION);
    const { stdout } = await run(process.execPath, [join(scratch, "out/main.js")], {
      cwd: scratch,
      env: { PATH: process.env.PATH, BASE_URL: baseUrl, TOKEN: accessToken, ORG: organizationId, PROMPT: prompt.id },
    });
    expect(JSON.parse(stdout)).toEqual({
      models: expect.arrayContaining(["local/echo"]),
      ok: true,
      error: [404, "not_found"],
      assertion: "contains",
      rendered: RENDERED,
    });
  }, 180_000);
});
