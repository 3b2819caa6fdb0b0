#!/usr/bin/env node
/**
 * Builds the published SDK: src/ compiled by tsc (ESM and declarations, tsconfig.build.json) into
 * dist/, with what it uses of @kiln/contracts compiled in beside it (dist/contracts/), so that the
 * package has no workspace dependency: the SDK renders prompts with the very code a run renders
 * them with, and a user installs only the SDK and its npm dependencies.
 *
 * tsc does not rewrite import specifiers, so the build compiles a copy: src/ (tests left out) and
 * the contracts modules it imports (and theirs) under a staging folder inside sdk/ (where the SDK's
 * node_modules resolve), each `@kiln/contracts/<name>` import rewritten to the relative path of its
 * copy. A contracts module that imports a package the SDK does not depend on fails the build.
 *
 * `--out-dir <dir>` builds elsewhere than dist/ (the build test).
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const sdkDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outAt = process.argv.indexOf("--out-dir");
const outDir = resolve(outAt > 0 ? (process.argv[outAt + 1] ?? "") : join(sdkDir, "dist"));
const sdkPackage = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8"));
// The workspace link (a devDependency: needed to build, bundled, never installed by a user).
const contractsDir = realpathSync(join(sdkDir, "node_modules", "@kiln", "contracts"));
const contractsExports = JSON.parse(readFileSync(join(contractsDir, "package.json"), "utf8")).exports;

const stage = join(sdkDir, ".tmp", `build-${randomUUID()}`);
const stagedSrc = join(stage, "src");
const stagedContracts = join(stagedSrc, "contracts");

const require = createRequire(join(sdkDir, "package.json"));
const ts = require("typescript");
const packageOf = (specifier) => specifier.match(/^(@[^/]+\/[^/]+|[^/]+)/)?.[1] ?? specifier;

/** The .ts files below `dir`, tests left out. */
function sourcesIn(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
    .map((e) => join(e.parentPath, e.name));
}

/** Copies a contracts module (and the modules it imports) into the stage; answers the copy's path. */
const copied = new Map();
function stageContracts(source) {
  const target = join(stagedContracts, relative(join(contractsDir, "src"), source));
  if (copied.has(source)) return target;
  copied.set(source, target);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, rewrite(readFileSync(source, "utf8"), source, target));
  return target;
}

/** What an import of `source` becomes in the copy at `target`: a staged contracts module, or as it is. */
function specifierFor(specifier, source, target) {
  if (specifier.startsWith(".")) {
    if (source.startsWith(contractsDir)) stageContracts(resolve(dirname(source), specifier.replace(/\.js$/, ".ts")));
    return specifier;
  }
  if (specifier.startsWith("@kiln/contracts/")) {
    const entry = contractsExports[`./${specifier.slice("@kiln/contracts/".length)}`];
    if (typeof entry !== "string") throw new Error(`${source}: @kiln/contracts has no export ${specifier}`);
    const path = relative(dirname(target), stageContracts(join(contractsDir, entry))).replace(/\.ts$/, ".js");
    return path.startsWith(".") ? path : `./${path}`;
  }
  if (!specifier.startsWith("node:") && !(packageOf(specifier) in (sdkPackage.dependencies ?? {}))) {
    throw new Error(`${source} imports ${specifier}, which is not a dependency of the SDK (sdk/package.json)`);
  }
  return specifier;
}

/** The text with its imports (as TypeScript finds them, dynamic ones included) rewritten by specifierFor. */
function rewrite(text, source, target) {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  let out = "";
  let at = 0;
  for (const { fileName, pos } of importedFiles) {
    // `pos` is at the literal or its opening quote: the specifier's text is the first match from there.
    const start = text.indexOf(fileName, pos);
    out += text.slice(at, start) + specifierFor(fileName, source, target);
    at = start + fileName.length;
  }
  return out + text.slice(at);
}

try {
  mkdirSync(stagedSrc, { recursive: true });
  for (const source of sourcesIn(join(sdkDir, "src"))) {
    const target = join(stagedSrc, relative(join(sdkDir, "src"), source));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, rewrite(readFileSync(source, "utf8"), source, target));
  }
  writeFileSync(
    join(stage, "tsconfig.json"),
    JSON.stringify({
      extends: join(sdkDir, "tsconfig.build.json"),
      compilerOptions: { rootDir: "src", outDir },
      include: ["src/**/*.ts"],
    }),
  );
  // A module removed from src/ leaves no stale file behind (only inside sdk/: never a folder of the caller's).
  if (outDir.startsWith(`${sdkDir}/`)) rmSync(outDir, { recursive: true, force: true });
  const tsc = require.resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", join(stage, "tsconfig.json")], { stdio: "inherit" });
} finally {
  rmSync(stage, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
