// Builds the launcher into one ES module (launcher/dist/kiln.mjs) with esbuild, so that `pnpm start`
// runs JavaScript with no transpiler loaded: every workspace package and dependency bundled, lmdb
// (a native addon) and the mongodb driver's optional native helpers left to Node. Source maps
// without the sources keep stack traces pointing at the TypeScript (`node --enable-source-maps`).
import { build } from "esbuild";

const started = performance.now();
await build({
  entryPoints: ["launcher/src/main.ts"],
  outfile: "launcher/dist/kiln.mjs",
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
if (process.argv.includes("--verbose")) {
  process.stderr.write(`built launcher/dist/kiln.mjs in ${Math.round(performance.now() - started)} ms\n`);
}
