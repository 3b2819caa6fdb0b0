/**
 * The bundle `pnpm start` and the image run (scripts/build.mjs): its source maps map Kiln's own
 * code back to the TypeScript and nothing of the dependencies, so that the first stack trace a
 * process formats (`--enable-source-maps`) parses a map of ~11 MB of heap, not ~77 MB. It comes in
 * chunks, one per dependency: the largest a process parses is a fraction of the whole.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { decode } from "@jridgewell/sourcemap-codec";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

describe("the launcher bundle", () => {
  /** Every output file's map, by the file's name relative to the output directory. */
  let maps: Map<string, { sources: string[]; mappings: string }>;
  let outDir = "";

  beforeAll(() => {
    // Built aside: other tests run launcher/dist/kiln.mjs meanwhile.
    const dir = mkdtempSync(join(tmpdir(), "kiln-build-"));
    execFileSync(process.execPath, ["scripts/build.mjs", "--out", join(dir, "kiln.mjs")], {
      cwd: ROOT,
      stdio: "ignore",
    });
    outDir = dir;
    maps = new Map(outputs(".map").map((f) => [f, JSON.parse(readFileSync(join(dir, f), "utf8"))]));
  }, 60_000);

  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  /** The build's files ending in `ext`, relative to the output directory: the launcher's and its chunks'. */
  const outputs = (ext: string) =>
    ["kiln.mjs", "kiln.mjs.map", ...readdirSync(join(outDir, "chunks")).map((f) => `chunks/${f}`)].filter((f) =>
      f.endsWith(ext),
    );

  it("maps Kiln's own code to its TypeScript, and no dependency", () => {
    const mapped = new Set<string>();
    let position: [number, number, { sources: string[]; mappings: string }] | undefined;
    for (const [file, map] of maps) {
      decode(map.mappings).forEach((line, i) => {
        for (const segment of line) {
          // Sources are relative to the map: named here from the repository's root.
          const source = relative(ROOT, resolve(outDir, dirname(file), map.sources[segment[1] ?? -1] ?? ""));
          mapped.add(source);
          if (!position && source.endsWith("libs/kit/src/ids.ts")) position = [i, segment[0], map];
        }
      });
    }
    expect([...mapped].filter((s) => s.includes("node_modules/"))).toEqual([]);
    for (const own of ["launcher/src/main.ts", "gateway/src/app.ts", "services/execution/src/runs/runner.ts"]) {
      expect(mapped.has(own)).toBe(true);
    }
    // What Node's --enable-source-maps does with a frame of the bundle.
    expect(position).toBeDefined();
    const [line, column, map] = position ?? [0, 0, { sources: [], mappings: "" }];
    const entry = new SourceMap(map as unknown as SourceMapPayload).findEntry(line, column) as {
      originalSource?: string;
    };
    expect(entry.originalSource).toMatch(/libs\/kit\/src\/ids\.ts$/);
  });

  it("comes in chunks, the largest a fraction of the whole", () => {
    // V8 keeps the memory of its largest parse: one 3.6 MB bundle left 30 MB behind it.
    const sizes = outputs(".mjs").map((f) => statSync(join(outDir, f)).size);
    const whole = sizes.reduce((a, b) => a + b, 0);
    expect(sizes.length).toBeGreaterThan(20);
    expect(Math.max(...sizes)).toBeLessThan(whole / 5);
  });
});
