/**
 * `kiln export [--org <id>] [--out <file>]` and `kiln import <file> [--org <id>] [--dry-run]`
 * (docs/bundles.md): the export and import routes called with an API key from the environment
 * (`KILN_API_KEY`, against `KILN_URL`, default http://127.0.0.1:8080). The organization defaults to
 * the key's own. A `.yaml`/`.yml` file is sent as a promptfoo config; a JSON file as it is when it
 * is a bundle, else as a promptfoo config. A promptfoo config is sent with the files it refers to
 * (`file://…`, read relative to it: promptfoo-files.ts).
 */
import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { UsageError } from "./internal-token-command.js";
import { referencedFiles } from "./promptfoo-files.js";

export interface BundleCommandIo {
  env: NodeJS.ProcessEnv;
  /** Progress and summaries (stderr): stdout carries only the bundle when no --out is given. */
  progress: (line: string) => void;
  out: (text: string) => void;
  fetch?: typeof fetch;
}

const USAGE = [
  "usage: kiln export [--org <id>] [--out <file>]",
  "       kiln import <file> [--org <id>] [--dry-run]",
  "  KILN_API_KEY: an API key (sk_…) with the read (export) or write (import) scopes; KILN_URL: the gateway, default http://127.0.0.1:8080",
].join("\n");

interface Report {
  dryRun: boolean;
  summary: { created: number; updated: number; skipped: number; conflicts: number };
  items: { kind: string; name: string; outcome: string; detail?: string }[];
  warnings: string[];
}

export async function bundleCommand(
  command: "export" | "import",
  args: string[],
  io: BundleCommandIo,
): Promise<number> {
  const { values, positionals } = (() => {
    try {
      return parseArgs({
        args,
        allowPositionals: true,
        options: { org: { type: "string" }, out: { type: "string" }, "dry-run": { type: "boolean" } },
      });
    } catch (e) {
      throw new UsageError(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    }
  })();
  const key = io.env.KILN_API_KEY;
  if (!key) throw new UsageError(`KILN_API_KEY is not set\n${USAGE}`);
  const base = (io.env.KILN_URL || "http://127.0.0.1:8080").replace(/\/+$/, "");
  const fetchImpl = io.fetch ?? fetch;
  const call = async (url: string, init?: RequestInit) => {
    try {
      return await fetchImpl(url, init);
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new CommandError(`cannot reach ${base} (KILN_URL): ${cause?.code ?? cause?.message ?? String(e)}`);
    }
  };
  const headers = { authorization: `Bearer ${key}` };

  async function failure(res: Response): Promise<never> {
    const text = await res.text();
    let message = text;
    try {
      const body = JSON.parse(text) as {
        error?: { code: string; message: string; details?: { field: string; issue: string }[] };
      };
      if (body.error) {
        message = [
          `${body.error.code}: ${body.error.message}`,
          ...(body.error.details ?? []).slice(0, 20).map((d) => `  ${d.field}: ${d.issue}`),
        ].join("\n");
      }
    } catch {}
    throw new CommandError(`${res.status} ${message}`);
  }

  async function organization(): Promise<string> {
    if (values.org) return values.org;
    const res = await call(`${base}/api/setup/verify`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: "{}",
    });
    if (!res.ok) await failure(res);
    const body = (await res.json()) as { organization: { id: string } | null };
    if (!body.organization) throw new UsageError(`the key belongs to no organization: give --org\n${USAGE}`);
    return body.organization.id;
  }

  if (command === "export") {
    if (positionals.length > 0 || values["dry-run"]) throw new UsageError(USAGE);
    const org = await organization();
    const res = await call(`${base}/api/organizations/${encodeURIComponent(org)}/export`, { headers });
    if (!res.ok) await failure(res);
    const text = await res.text();
    const bundle = JSON.parse(text) as Record<string, unknown[]>;
    const counts = ["prompts", "tools", "skills", "agents"].map((k) => `${bundle[k]?.length ?? 0} ${k}`);
    if (values.out) {
      await writeFile(values.out, `${JSON.stringify(bundle, null, 2)}\n`);
      io.progress(`exported ${org}: ${counts.join(", ")} → ${values.out}`);
    } else {
      io.out(`${JSON.stringify(bundle, null, 2)}\n`);
      io.progress(`exported ${org}: ${counts.join(", ")}`);
    }
    return 0;
  }

  const [file, ...extra] = positionals;
  if (!file || extra.length > 0 || values.out) throw new UsageError(USAGE);
  const text = await readFile(file, "utf8").catch((e: NodeJS.ErrnoException) => {
    throw new CommandError(`cannot read ${file}: ${e.code ?? e.message}`);
  });
  let body = text;
  let things = "";
  // A promptfoo config goes with the files it refers to, read relative to it.
  const promptfoo = async (config: unknown) => {
    const { files, missing } = await referencedFiles(file, text);
    const n = Object.keys(files).length;
    if (n > 0) things = `${n} referenced file${n === 1 ? "" : "s"}, `;
    for (const path of missing) io.progress(`  not sent: file://${path} (not found, or past the size limit)`);
    return JSON.stringify({ format: "promptfoo", config, files });
  };
  if (/\.ya?ml$/i.test(file)) body = await promptfoo(text);
  else {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new UsageError(`${file} is neither JSON nor a .yaml/.yml file`);
    }
    if (parsed.format === "kiln.bundle/v1") {
      const n = ["prompts", "tools", "skills", "agents"].reduce(
        (sum, k) => sum + (Array.isArray(parsed[k]) ? (parsed[k] as unknown[]).length : 0),
        0,
      );
      things = `${n} prompts, tools, skills and agents, `;
    } else body = await promptfoo(parsed);
  }
  const org = await organization();
  io.progress(`importing ${file} (${things}${(Buffer.byteLength(body) / 1_048_576).toFixed(1)} MB) into ${org}…`);
  const query = values["dry-run"] ? "?dryRun=true" : "";
  const res = await call(`${base}/api/organizations/${encodeURIComponent(org)}/import${query}`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body,
  });
  if (!res.ok) await failure(res);
  const report = (await res.json()) as Report;
  for (const item of report.items.filter((i) => i.outcome !== "skipped")) {
    io.progress(`  ${item.outcome.padEnd(8)} ${item.kind} ${item.name}${item.detail ? ` (${item.detail})` : ""}`);
  }
  for (const warning of report.warnings) io.progress(`  warning: ${warning}`);
  const s = report.summary;
  io.progress(
    `${report.dryRun ? "dry run: would create" : "created"} ${s.created}, ${report.dryRun ? "update" : "updated"} ${s.updated}, skipped ${s.skipped}, conflicts ${s.conflicts}`,
  );
  return s.conflicts > 0 ? 1 : 0;
}

/** A failure the API answered: printed without a stack trace. */
export class CommandError extends Error {}
