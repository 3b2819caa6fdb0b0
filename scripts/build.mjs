// Builds the launcher into one ES module (launcher/dist/kiln.mjs) with esbuild, so that `pnpm start`
// runs JavaScript with no transpiler loaded: every workspace package and dependency bundled, the
// native addons (better-sqlite3, and lmdb to carry format-1 data over) and the mongodb driver's
// optional native helpers left to Node. Source maps without the sources keep stack traces pointing
// at the TypeScript (`node --enable-source-maps`).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decode, encode } from "@jridgewell/sourcemap-codec";
import { build } from "esbuild";

/** The newest modification time under `path` (dependencies and build output left out). */
function newestMtime(path) {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = readdirSync(path).filter((entry) => entry !== "node_modules" && entry !== "dist");
  return Math.max(0, ...entries.map((entry) => newestMtime(join(path, entry))));
}

// `--out <file>` builds the bundle alone elsewhere (the build test), leaving launcher/dist and the console alone.
const outAt = process.argv.indexOf("--out");
const outfile = outAt > 0 ? process.argv[outAt + 1] : "launcher/dist/kiln.mjs";
// What goes into the bundle: unchanged since the last build (`pnpm start` again), it is not made again.
const bundleSources = [
  "launcher/src",
  "services",
  "gateway/src",
  "proto",
  "package.json",
  "pnpm-lock.yaml",
  "scripts/build.mjs",
];
const bundleStale =
  outAt > 0 ||
  process.argv.includes("--force") ||
  !existsSync(outfile) ||
  !existsSync(`${outfile}.map`) ||
  Math.max(...bundleSources.map(newestMtime)) > statSync(outfile).mtimeMs;
if (bundleStale) {
  const started = performance.now();
  await build({
    entryPoints: ["launcher/src/main.ts"],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    sourcesContent: false,
    // Smaller source to parse and keep in memory (7.4 MB -> 3 MB); names kept for errors and logs.
    minify: true,
    keepNames: true,
    logLevel: "warning",
    external: [
      "lmdb",
      "better-sqlite3",
      "tsx",
      "kerberos",
      "@mongodb-js/zstd",
      "snappy",
      "socks",
      "aws4",
      "mongodb-client-encryption",
      "gcp-metadata",
      "@aws-sdk/credential-providers",
    ],
    // Bundled CommonJS dependencies call require(); an ES module has none of its own.
    banner: {
      js: 'import { createRequire as __kilnRequire } from "node:module"; const require = __kilnRequire(import.meta.url);',
    },
  });
  // The source map keeps Kiln's own code only. Node parses the whole map the first time a stack trace
  // is formatted (any error, and every stream destroyed with one: a process's shutdown): with the
  // dependencies' mappings that took 77 MB of heap and a quarter of a second, and a service bounded
  // to 96 MB died of it when it stopped; Kiln's own 1 in 8 mappings take 11 MB. Frames inside a
  // dependency keep their position in kiln.mjs (with its function name: keepNames).
  const mapFile = `${outfile}.map`;
  const map = JSON.parse(readFileSync(mapFile, "utf8"));
  const ours = map.sources.map((source) => !source.includes("node_modules/"));
  map.mappings = encode(decode(map.mappings).map((line) => line.filter((segment) => ours[segment[1]] === true)));
  writeFileSync(mapFile, JSON.stringify(map));
  if (process.argv.includes("--verbose")) {
    process.stderr.write(`built ${outfile} in ${Math.round(performance.now() - started)} ms\n`);
  }
}

// The console (console/dist, served at / by the gateway): built with Vite when its sources changed
// since the last build (about a second), so `pnpm start` always serves the current one.
const consoleSources = ["console/src", "console/index.html", "console/vite.config.ts", "sdk/src"];
const builtConsole = "console/dist/index.html";
if (outAt < 0 && existsSync("console/package.json")) {
  const stale =
    !existsSync(builtConsole) || Math.max(...consoleSources.map(newestMtime)) > statSync(builtConsole).mtimeMs;
  if (stale) {
    const r = spawnSync("pnpm", ["--filter", "@kiln/console", "build"], { stdio: ["ignore", "ignore", "inherit"] });
    if (r.status !== 0) {
      process.stderr.write("building the console failed (pnpm --filter @kiln/console build)\n");
      process.exit(1);
    }
  }
}
