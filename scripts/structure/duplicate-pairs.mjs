/**
 * Production duplicate pairs (docs/architecture.md "Measuring the structure"), counted by the
 * `duplicates` tool when it is on PATH: it reads a temporary copy of the production files outside
 * proto/ (no protobuf contracts, generated code or tests: the report's `--list` set), and the rows it
 * marks boilerplate are left out, as are any that name a protobuf, generated or test file. The copy
 * is removed afterwards. Without the tool the count is absent, never a failure.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const MOST = 200;
/** A row: `D12 a.ts:10-24 ~ b.ts:40-54 [shape] [boilerplate] [(+N more runs)]`. */
const ROW = /^D\d+\s+(\S+):\d+-\d+\s+~\s+(\S+):\d+-\d+(.*)$/;
const leftOut = (file) =>
  /^proto\//.test(file) || /(^|\/)gen\//.test(file) || /(^|\/)(test|testing)\/|\.test\./.test(file);

/**
 * `{ available: false }` without the tool; else the pairs kept (`a ~ b`, as the tool writes them,
 * longest first), and what the tool said was cut (`+N more pairs`) or not read (`incomplete: …`).
 */
export function productionDuplicates(root, files) {
  const probe = spawnSync("duplicates", ["--help"], { encoding: "utf8" });
  if (probe.error) return { available: false };
  const copy = mkdtempSync(join(tmpdir(), "kiln-structure-"));
  try {
    for (const file of files.filter((f) => !leftOut(f))) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      copyFileSync(join(root, file), join(copy, file));
    }
    const run = spawnSync("duplicates", ["--repo", copy, "--most", String(MOST), "--seconds", "120"], {
      encoding: "utf8",
      timeout: 180_000,
    });
    if (run.error || run.status !== 0) return { available: false, error: String(run.error ?? run.stderr) };
    const lines = run.stdout.split("\n");
    const pairs = lines
      .map((line) => ROW.exec(line.trim()))
      .filter((m) => m && !/\bboilerplate\b/.test(m[3]) && !leftOut(m[1]) && !leftOut(m[2]))
      .map((m) => m[0].replace(/^D\d+\s+/, ""));
    const cut = lines.find((line) => /^\(\+\d+ more pairs\)/.test(line.trim()));
    const notes = [cut?.trim(), ...lines.filter((line) => /^incomplete:/.test(line.trim()))].filter(Boolean);
    return { available: true, pairs, notes };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
