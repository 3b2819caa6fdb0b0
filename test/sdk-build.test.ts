/**
 * The SDK as a package user gets it: compiled by tsc (ESM and declarations, sdk/tsconfig.build.json)
 * and imported by plain Node (no TypeScript loader) in a child process that calls a live gateway.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { createTestClient } from "@kiln/gateway/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";

const run = promisify(execFile);
const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "..", "sdk");
// Inside sdk/ so that the compiled code resolves the SDK's own dependencies (openapi-fetch).
const outDir = join(sdkDir, ".tmp", `dist-${randomUUID()}`);
const tsc = createRequire(join(sdkDir, "package.json")).resolve("typescript/bin/tsc");

let kiln: EmbeddedKiln;
let baseUrl: string;

beforeAll(async () => {
  ({ kiln, baseUrl } = await startEmbedded());
});

afterAll(async () => {
  await kiln?.close();
  await rm(join(sdkDir, ".tmp"), { recursive: true, force: true });
});

describe("the built SDK", () => {
  it("compiles to ESM with declarations and runs on plain Node against a live gateway", async () => {
    await run(process.execPath, [tsc, "-p", join(sdkDir, "tsconfig.build.json"), "--outDir", outDir]);
    expect(await readFile(join(outDir, "index.d.ts"), "utf8")).toContain("Kiln");

    const api = createTestClient(baseUrl);
    const { accessToken } = await api.signUp();
    const organizationId = (await api.onboard(accessToken)).organization.id;
    const script = `
      import { Kiln, KilnError } from ${JSON.stringify(pathToFileURL(join(outDir, "index.js")).href)};
      const kiln = new Kiln({ baseUrl: process.env.BASE_URL, accessToken: process.env.TOKEN });
      const models = await kiln.models.list();
      const verified = await kiln.setup.verify({ organizationId: process.env.ORG });
      const missing = await kiln.skills.get("skl_missing").catch((e) => e);
      console.log(JSON.stringify({
        models: models.data.map((m) => m.id),
        ok: verified.ok,
        error: missing instanceof KilnError ? [missing.status, missing.code] : String(missing),
      }));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      env: { PATH: process.env.PATH, BASE_URL: baseUrl, TOKEN: accessToken, ORG: organizationId },
    });
    expect(JSON.parse(stdout)).toEqual({
      models: expect.arrayContaining(["local/echo"]),
      ok: true,
      error: [404, "not_found"],
    });
  });
});
