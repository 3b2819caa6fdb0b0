import type { UsageReport, UsageRow } from "@kiln/sdk";
import { useCallback, useId, useState } from "react";
import { useLoaded } from "./action.js";
import { call, type ShownError } from "./api.js";
import { dollars } from "./model-picker.js";
import { DataTable, SelectField } from "./ui.js";

/** The groupings of GET /api/usage a person breaks spend down by, and where each one's names are listed. */
const GROUPINGS = {
  model: { label: "Model", names: null },
  apiKey: { label: "API key", names: "/api/api-keys" },
  prompt: { label: "Prompt", names: "/api/prompts" },
  skill: { label: "Skill", names: "/api/skills" },
  agent: { label: "Agent", names: "/api/agents" },
  connection: { label: "Connection", names: "/api/provider-connections" },
} as const;
type Grouping = keyof typeof GROUPINGS;

/** The row's key as a person reads it: a name where one is known, else the id; "" as what it stands for. */
function keyOf(grouping: Grouping, row: UsageRow, names: Map<string, string>): string {
  const id =
    grouping === "model"
      ? row.model
      : grouping === "apiKey"
        ? row.apiKeyId
        : grouping === "prompt"
          ? row.promptId
          : grouping === "skill"
            ? row.skillId
            : grouping === "agent"
              ? row.agentId
              : row.connectionId;
  if (!id) {
    if (grouping === "apiKey") return "signed-in members and services";
    if (grouping === "connection") return "the deployment's providers";
    if (grouping === "model") return "several models (a skill's steps)";
    return `not a ${GROUPINGS[grouping].label.toLowerCase()} run`;
  }
  return names.get(id) ?? id;
}

/** The names of what a grouping's ids stand for (the first 200); a list the caller may not read gives none. */
async function namesOf(grouping: Grouping, organizationId: string): Promise<Map<string, string>> {
  const path = GROUPINGS[grouping].names;
  if (!path) return new Map();
  try {
    const page = await call<{ data: { id: string; name: string }[] }>(
      "GET",
      `${path}?organizationId=${organizationId}&limit=200`,
    );
    return new Map(page.data.map((r) => [r.id, r.name]));
  } catch {
    return new Map();
  }
}

const count = (n: number) => new Intl.NumberFormat("en-US").format(n);

/** GET /api/usage over a range of UTC days, grouped. */
export const usageQuery = (organizationId: string, range: { from: string; to: string }, groupBy: string) =>
  `/api/usage?organizationId=${organizationId}&from=${range.from}&to=${range.to}&groupBy=${groupBy}`;

interface ShownRow {
  key: string;
  runs: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** The rows by the name they show (a prompt's versions together), most expensive first. */
function shownRows(grouping: Grouping, rows: UsageRow[], names: Map<string, string>): ShownRow[] {
  const byKey = new Map<string, ShownRow>();
  for (const r of rows) {
    const key = keyOf(grouping, r, names);
    const row = byKey.get(key) ?? { key, runs: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
    row.runs += r.runs;
    row.inputTokens += r.inputTokens;
    row.outputTokens += r.outputTokens;
    row.costUsd += r.costUsd;
    byKey.set(key, row);
  }
  return [...byKey.values()].sort((a, b) => b.costUsd - a.costUsd || b.runs - a.runs);
}

/** Spend of the period by one grouping at a time, most expensive first, with its CSV. */
export function UsageBreakdown({
  organizationId,
  range,
  onError,
}: {
  organizationId: string;
  range: { from: string; to: string };
  onError: (e: ShownError) => void;
}) {
  const id = useId();
  const [grouping, setGrouping] = useState<Grouping>("model");
  const read = useCallback(async () => {
    const [report, names] = await Promise.all([
      call<UsageReport>("GET", usageQuery(organizationId, range, grouping)),
      namesOf(grouping, organizationId),
    ]);
    return { grouping, report, names };
  }, [organizationId, range, grouping]);
  const loaded = useLoaded(read, onError).value;
  const label = GROUPINGS[grouping].label;
  const rows = loaded ? shownRows(loaded.grouping, loaded.report.data, loaded.names) : [];
  return (
    <section aria-labelledby={`${id}-by`}>
      <h2 id={`${id}-by`}>Spend by {label === "API key" ? label : label.toLowerCase()}</h2>
      <div className="actions usage-controls">
        <SelectField
          id={`${id}-group`}
          label="Break down by"
          value={grouping}
          onChange={(v) => setGrouping(v as Grouping)}
        >
          {Object.entries(GROUPINGS).map(([value, g]) => (
            <option key={value} value={value}>
              {g.label}
            </option>
          ))}
        </SelectField>
        <a href={`${usageQuery(organizationId, range, grouping)}&format=csv`} download={`usage-by-${grouping}.csv`}>
          Download CSV
        </a>
      </div>
      {!loaded || loaded.grouping !== grouping ? (
        <p className="hint">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="hint">No run in this period.</p>
      ) : (
        <DataTable
          label={`Usage by ${label === "API key" ? label : label.toLowerCase()}`}
          columns={[label, "Runs", "Input tokens", "Output tokens", "Spend"]}
        >
          {rows.map((r) => (
            <tr key={r.key}>
              <td className="wrap">{r.key}</td>
              <td className="num">{count(r.runs)}</td>
              <td className="num">{count(r.inputTokens)}</td>
              <td className="num">{count(r.outputTokens)}</td>
              <td className="num">{dollars(r.costUsd)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
