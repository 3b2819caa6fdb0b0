#!/usr/bin/env node
/**
 * Measures the structure targets of docs/architecture.md "Measuring the structure" on the files git
 * tracks: import circles, arrows back up between the layers, production source files over 300
 * lines, functions over 80 lines of their own (structure/function-lengths.mjs), production
 * duplicate pairs (structure/duplicate-pairs.mjs, with the `duplicates` tool when it is on PATH),
 * `string …_json` protobuf fields, test scaffolding under src/, and references in code to documents
 * or headings that the repository does not have. `--list` prints the production files instead (the
 * set a duplicate finder should read). `--json` prints the figures as JSON. Nothing in the tree is
 * written; the duplicate count reads a temporary copy of the production files. The figures are
 * reported, not judged: test/structure.test.ts holds the targets met.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { productionDuplicates } from "./structure/duplicate-pairs.mjs";
import { longFunctions } from "./structure/function-lengths.mjs";

const root = normalize(join(dirname(fileURLToPath(import.meta.url)), ".."));
const tracked = execFileSync("git", ["ls-files", "-co", "--exclude-standard"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((file) => file !== "" && existsSync(join(root, file)));

const SOURCE = /\.(ts|tsx|mjs|js)$/;
/** Tests, their support, generated code, docs, examples and benchmarks are not production code. */
function isTestFile(file) {
  return /(^|\/)(test|testing)\//.test(file) || /\.(test|spec)\.(ts|tsx|mjs|js)$/.test(file);
}
function isProduction(file) {
  if (!SOURCE.test(file) || file.endsWith(".d.ts")) return false;
  if (isTestFile(file)) return false;
  return !/(^|\/)(gen|dist|node_modules|docs|examples|vendor)\//.test(file);
}
const sources = tracked.filter(
  (file) => SOURCE.test(file) && !file.endsWith(".d.ts") && !/(^|\/)(gen|dist)\//.test(file),
);
const production = sources.filter(isProduction);

if (process.argv.includes("--list")) {
  process.stdout.write(`${production.join("\n")}\n`);
  process.exit(0);
}

// ---- imports ---------------------------------------------------------------------------------
const packages = new Map(); // package name -> { dir, exports }
for (const file of tracked.filter((f) => f.endsWith("package.json") && !f.includes("node_modules"))) {
  const json = JSON.parse(readFileSync(join(root, file), "utf8"));
  if (json.name) packages.set(json.name, { dir: dirname(file), exports: json.exports });
}
const sourceSet = new Set(sources);

function exportTarget(value) {
  if (typeof value === "string") return value;
  if (value && typeof value === "object") {
    for (const key of ["kiln-source", "import", "default", "types"]) {
      const target = exportTarget(value[key]);
      if (target) return target;
    }
  }
  return undefined;
}
function asSource(path) {
  const candidates = [
    path,
    path.replace(/\.(m?js)$/, ".ts"),
    path.replace(/\.js$/, ".tsx"),
    `${path}.ts`,
    `${path}.tsx`,
    `${path}/index.ts`,
  ];
  return candidates.find((candidate) => sourceSet.has(candidate));
}
function resolveImport(from, specifier) {
  if (specifier.startsWith(".")) return asSource(normalize(join(dirname(from), specifier)));
  const match = /^(@[^/]+\/[^/]+|[^@/][^/]*)(\/.*)?$/.exec(specifier);
  const pkg = match && packages.get(match[1]);
  if (!pkg) return undefined;
  const subpath = match[2] ? `.${match[2]}` : ".";
  const exports = pkg.exports;
  const target =
    exports && typeof exports === "object" && !Array.isArray(exports) && !exportTarget(exports)
      ? exportTarget(exports[subpath])
      : subpath === "."
        ? exportTarget(exports)
        : undefined;
  return target ? asSource(normalize(join(pkg.dir, target))) : undefined;
}
const IMPORT =
  /(?:^|[;\s])(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|(?:^|[;\s])import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
function importsOf(file) {
  const text = readFileSync(join(root, file), "utf8");
  const found = new Set();
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    if (specifier === "vitest") found.add("vitest");
    const target = resolveImport(file, specifier);
    if (target && target !== file) found.add(target);
  }
  return found;
}
const graph = new Map(sources.map((file) => [file, importsOf(file)]));

/** Strongly connected components of more than one file among production files (Tarjan). */
function circles(files) {
  const inSet = new Set(files);
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const visit = (file) => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!inSet.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file), index.get(target)));
    }
    if (low.get(file) === index.get(file)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return found;
}

// ---- the figures -------------------------------------------------------------------------------
const lineCount = (file) => readFileSync(join(root, file), "utf8").split("\n").length - 1;
const large = production
  .map((file) => [file, lineCount(file)])
  .filter(([, lines]) => lines > 300)
  .sort((a, b) => b[1] - a[1]);

const protoFiles = tracked.filter((file) => file.endsWith(".proto") && !/(^|\/)vendor\//.test(file));
const jsonFields = protoFiles.flatMap((file) =>
  readFileSync(join(root, file), "utf8")
    .split("\n")
    .map((line, at) => [line, at])
    .filter(([line]) => /^\s*(optional\s+|repeated\s+)?string\s+(\w+_)?json\s*=/.test(line))
    .map(([line, at]) => `${file}:${at + 1}: ${line.trim()}`),
);

const importers = new Map();
for (const [file, targets] of graph)
  for (const target of targets) importers.set(target, [...(importers.get(target) ?? []), file]);
const scaffolding = production
  .filter((file) => /(^|\/)src\//.test(file))
  .filter((file) => {
    if (graph.get(file)?.has("vitest")) return true;
    const by = importers.get(file) ?? [];
    return by.length > 0 && by.every(isTestFile);
  });

/** A document named in code must be in docs/ (or be the README), and a quoted heading after it must be one of its headings. */
const headingsOf = new Map();
function headings(doc) {
  if (!headingsOf.has(doc)) {
    const path = join(root, doc);
    headingsOf.set(
      doc,
      existsSync(path)
        ? readFileSync(path, "utf8")
            .split("\n")
            .filter((line) => /^#{1,6}\s/.test(line))
            .map((line) => line.replace(/^#+\s*/, "").trim())
        : undefined,
    );
  }
  return headingsOf.get(doc);
}
const REFERENCE = /\b((?:docs\/)?[\w-]+\.md)\b((?:\s*(?:"[^"\n]+"|,|and|;)\s*)*)/g;
const FORBIDDEN = /\bspec\s*§|\btech-notes\b|\bstyle\.md\b/;
const badReferences = [];
for (const file of sources.filter((f) => !f.startsWith("docs/"))) {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  lines.forEach((whole, at) => {
    // Only what a comment says: `//` to the end of the line, or a line of a block comment.
    const comment = /^\s*(\*|\/\*)/.test(whole)
      ? whole
      : /(^|\s)\/\/\s/.test(whole)
        ? whole.slice(whole.search(/(^|\s)\/\/\s/))
        : "";
    const line = comment;
    if (line === "") return;
    const where = `${file}:${at + 1}`;
    if (FORBIDDEN.test(line)) badReferences.push(`${where}: cites a document outside the repository: ${line.trim()}`);
    for (const match of line.matchAll(REFERENCE)) {
      const name = match[1];
      if (/^(README|CHANGELOG)\.md$/.test(name)) continue;
      const doc = name.startsWith("docs/") ? name : `docs/${name}`;
      const known = headings(doc);
      if (!known) {
        badReferences.push(`${where}: no document ${doc}`);
        continue;
      }
      for (const quoted of (match[2] ?? "").matchAll(/"([^"\n]+)"/g)) {
        if (!known.includes(quoted[1])) badReferences.push(`${where}: ${doc} has no heading "${quoted[1]}"`);
      }
    }
  });
}

/**
 * Arrows back up: production imports against the layers (proto/ < libs/ < services/ < gateway/ <
 * launcher/): a library importing a service, the gateway or the launcher; a service another service.
 */
const TIERS = ["proto/", "libs/", "services/", "gateway/", "launcher/"];
const tierOf = (file) => TIERS.findIndex((prefix) => file.startsWith(prefix));
const serviceOf = (file) => (file.startsWith("services/") ? file.split("/")[1] : undefined);
const arrowsBackUp = production.flatMap((file) =>
  [...(graph.get(file) ?? [])]
    .filter((target) => target !== "vitest" && isProduction(target))
    .filter((target) => {
      const [from, to] = [tierOf(file), tierOf(target)];
      if (from < 0 || to < 0) return false;
      if (from < to) return true;
      return from === to && serviceOf(file) !== serviceOf(target);
    })
    .map((target) => `${file} -> ${target}`),
);

const duplicates = productionDuplicates(root, production);
const report = {
  productionFiles: production.length,
  circles: circles(production),
  arrowsBackUp,
  filesOver300Lines: large.map(([file, lines]) => `${file} (${lines})`),
  functionsOver80OwnLines: longFunctions(root, production).map((f) => `${f.file}:${f.line} ${f.name} (${f.ownLines})`),
  // null: the `duplicates` tool is not on PATH.
  duplicatePairs: duplicates.available ? duplicates.pairs : null,
  duplicateNotes: duplicates.available ? duplicates.notes : [],
  jsonStringFields: jsonFields,
  scaffoldingUnderSrc: scaffolding,
  badDocReferences: badReferences,
};
if (process.argv.includes("--json")) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  const section = (title, items) =>
    `${title}: ${items.length}${items.length ? `\n  ${items.map((item) => (Array.isArray(item) ? item.join(" -> ") : item)).join("\n  ")}` : ""}`;
  console.log(`production source files: ${report.productionFiles}`);
  console.log(section("import circles", report.circles));
  console.log(
    section("arrows back up (a library importing a service or above, a service another)", report.arrowsBackUp),
  );
  console.log(section("production files over 300 lines", report.filesOver300Lines));
  console.log(
    section("functions over 80 own lines (their lines less their nested functions')", report.functionsOver80OwnLines),
  );
  const pairsTitle = "production duplicate pairs (outside proto/, generated code and tests; boilerplate left out)";
  if (report.duplicatePairs === null) console.log(`${pairsTitle}: duplicates not available`);
  else
    console.log(
      section(pairsTitle, [...report.duplicatePairs, ...report.duplicateNotes]).replace(
        /: \d+/,
        `: ${report.duplicatePairs.length}`,
      ),
    );
  console.log(section("string …_json protobuf fields", report.jsonStringFields));
  console.log(section("test scaffolding under src/", report.scaffoldingUnderSrc));
  console.log(section("references to documents or headings not in the repository", report.badDocReferences));
}
