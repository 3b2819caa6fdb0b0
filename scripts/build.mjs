// Builds the launcher into ES modules (launcher/dist/kiln.mjs and its chunks/) with esbuild, so that
// `pnpm start` runs JavaScript with no transpiler loaded: every workspace package and dependency
// bundled (one chunk per dependency, and per command what only it imports), the
// native addons (better-sqlite3, and lmdb to carry format-1 data over) and the mongodb driver's
// optional native helpers left to Node. Source maps without the sources keep stack traces pointing
// at the TypeScript (`node --enable-source-maps`).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
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
  "libs",
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
  !existsSync(join(dirname(outfile), "chunks")) ||
  Math.max(...bundleSources.map(newestMtime)) > statSync(outfile).mtimeMs;
if (bundleStale) {
  const started = performance.now();
  const outdir = dirname(outfile);
  const entryName = basename(outfile, ".mjs");
  const options = {
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
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
  };
  // One chunk per dependency. V8 parses a module in memory of its own (about nine times its source)
  // that it frees after, and malloc keeps it resident: the one 3.6 MB bundle left 30 MB of every
  // process's memory behind its parse, where the largest chunk's parse takes a few. A first pass
  // lists the files of each package in the bundle; each package becomes an entry point of its own
  // (never loaded), so that esbuild puts the code the launcher shares with it in a chunk of its own.
  const { metafile } = await build({
    ...options,
    entryPoints: ["launcher/src/main.ts"],
    outfile: join(outdir, "kiln-meta.mjs"),
    write: false,
    metafile: true,
  });
  const packages = new Map();
  for (const input of Object.keys(Object.values(metafile.outputs)[0].inputs)) {
    const name = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
    if (name) packages.set(name, [...(packages.get(name) ?? []), resolve(input)]);
  }
  // The chunks of the last build go; a chunk's name is its content's hash.
  rmSync(join(outdir, "chunks"), { recursive: true, force: true });
  await build({
    ...options,
    entryPoints: [
      { in: "launcher/src/main.ts", out: entryName },
      ...[...packages.keys()].map((name) => ({
        in: `kiln-package:${name}`,
        out: `chunks/packages/${name.replace("/", "+")}`,
      })),
    ],
    outdir,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    sourcemap: true,
    sourcesContent: false,
    plugins: [
      {
        name: "kiln-package",
        setup(b) {
          b.onResolve({ filter: /^kiln-package:/ }, (args) => ({
            path: args.path.slice("kiln-package:".length),
            namespace: "kiln-package",
          }));
          b.onLoad({ filter: /.*/, namespace: "kiln-package" }, (args) => ({
            // Namespaces re-exported: every file whole, whatever the package says of its side effects.
            contents: packages
              .get(args.path)
              .map((file, i) => `import * as m${i} from ${JSON.stringify(file)}; export { m${i} };`)
              .join("\n"),
            resolveDir: ".",
          }));
        },
      },
    ],
    // Bundled CommonJS dependencies call require(); an ES module has none of its own.
    banner: {
      js: 'import { createRequire as __kilnRequire } from "node:module"; const require = __kilnRequire(import.meta.url);',
    },
  });
  // The per-package entry points are never loaded: only the launcher and its chunks are kept.
  rmSync(join(outdir, "chunks", "packages"), { recursive: true, force: true });
  // The source maps keep Kiln's own code only. Node parses a whole map the first time a stack trace
  // is formatted (any error, and every stream destroyed with one: a process's shutdown): with the
  // dependencies' mappings that took 77 MB of heap and a quarter of a second, and a service bounded
  // to 96 MB died of it when it stopped; Kiln's own 1 in 8 mappings take 11 MB. Frames inside a
  // dependency keep their position in its chunk (with its function name: keepNames).
  for (const mapFile of [
    `${outfile}.map`,
    ...readdirSync(join(outdir, "chunks")).map((f) => join(outdir, "chunks", f)),
  ]) {
    if (!mapFile.endsWith(".map")) continue;
    const map = JSON.parse(readFileSync(mapFile, "utf8"));
    const ours = map.sources.map((source) => !source.includes("node_modules/"));
    map.mappings = encode(decode(map.mappings).map((line) => line.filter((segment) => ours[segment[1]] === true)));
    writeFileSync(mapFile, JSON.stringify(map));
  }
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
