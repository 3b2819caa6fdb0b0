/**
 * The bundle `pnpm start` and the image run (scripts/build.mjs): its source map maps Kiln's own
 * code back to the TypeScript and nothing of the dependencies, so that the first stack trace a
 * process formats (`--enable-source-maps`) parses a map of ~11 MB of heap, not ~77 MB.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { decode } from "@jridgewell/sourcemap-codec";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

describe("the launcher bundle", () => {
  let map: { sources: string[]; mappings: string };
  let outDir = "";

  beforeAll(() => {
    // Built aside: other tests run launcher/dist/kiln.mjs meanwhile.
    const dir = mkdtempSync(join(tmpdir(), "kiln-build-"));
    execFileSync(process.execPath, ["scripts/build.mjs", "--out", join(dir, "kiln.mjs")], {
      cwd: ROOT,
      stdio: "ignore",
    });
    map = JSON.parse(readFileSync(join(dir, "kiln.mjs.map"), "utf8"));
    outDir = dir;
  }, 60_000);

  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("maps Kiln's own code to its TypeScript, and no dependency", () => {
    const lines = decode(map.mappings);
    const mapped = new Set<string>();
    let position: [number, number] | undefined;
    lines.forEach((line, i) => {
      for (const segment of line) {
        // Sources are relative to the map: named here from the repository's root.
        const source = relative(ROOT, resolve(outDir, map.sources[segment[1] ?? -1] ?? ""));
        mapped.add(source);
        if (!position && source.endsWith("services/kit/src/ids.ts")) position = [i, segment[0]];
      }
    });
    expect([...mapped].filter((s) => s.includes("node_modules/"))).toEqual([]);
    for (const own of ["launcher/src/main.ts", "gateway/src/app.ts", "services/execution/src/runs/runner.ts"]) {
      expect(mapped.has(own)).toBe(true);
    }
    // What Node's --enable-source-maps does with a frame of the bundle.
    expect(position).toBeDefined();
    const [line, column] = position ?? [0, 0];
    const entry = new SourceMap(map as unknown as SourceMapPayload).findEntry(line, column) as {
      originalSource?: string;
    };
    expect(entry.originalSource).toMatch(/services\/kit\/src\/ids\.ts$/);
  });
});
