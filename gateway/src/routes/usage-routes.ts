/** GET /api/usage (docs/usage.md): the usage ledger of an organization, as JSON or CSV. */
import type { UsageRow } from "@kiln/proto/usage";
import type { FastifyReply, FastifyRequest } from "fastify";
import Type, { type Static } from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { operations } from "../http/operation.js";
import { rpcOptions } from "../http/request.js";
import { errorResponses, OneOf, ref } from "../schemas.js";
import { OrganizationId, organizationOf } from "./catalog-requests.js";

const GROUPS = ["day", "model", "apiKey", "prompt", "skill", "agent", "connection"] as const;

/** The key fields of each grouping, in the order rows and CSV columns carry them. */
const KEY_FIELDS: Record<(typeof GROUPS)[number], string[]> = {
  day: ["day"],
  model: ["model", "provider"],
  apiKey: ["apiKeyId"],
  prompt: ["promptId", "promptVersionId"],
  skill: ["skillId", "skillVersionId"],
  agent: ["agentId", "agentVersionId"],
  connection: ["connectionId", "provider"],
};

const COUNTERS = [
  "runs",
  "inputTokens",
  "cachedInputTokens",
  "cacheWriteInputTokens",
  "outputTokens",
  "reasoningTokens",
  "costUsd",
  "cacheHits",
  "savedCostUsd",
] as const;

const Counters = {
  runs: Type.Integer({ description: "stored runs (an agent run and each of its steps' runs count)" }),
  inputTokens: Type.Integer(),
  cachedInputTokens: Type.Integer({ description: "the part of inputTokens read from the provider's cache" }),
  cacheWriteInputTokens: Type.Integer({ description: "the part of inputTokens written to the provider's cache" }),
  outputTokens: Type.Integer(),
  reasoningTokens: Type.Integer({ description: "the part of outputTokens spent reasoning" }),
  costUsd: Type.Number({ description: 'estimated cost in USD (docs/providers.md "How usage is priced")' }),
  cacheHits: Type.Integer({ description: "prompt runs answered from the response cache (docs/cache.md)" }),
  savedCostUsd: Type.Number({ description: "what the cached answers had cost when the model made them" }),
};

const Key = Type.Optional(Type.String());
export const UsageRowView = Type.Object(
  {
    day: Key,
    model: Key,
    provider: Key,
    apiKeyId: Key,
    promptId: Key,
    promptVersionId: Key,
    skillId: Key,
    skillVersionId: Key,
    agentId: Key,
    agentVersionId: Key,
    connectionId: Key,
    ...Counters,
  },
  {
    $id: "UsageRow",
    additionalProperties: false,
    description: "What a group of runs used: the grouping's key fields, then the counters",
  },
);
type RowView = Record<string, string | number>;

export const UsageReportView = Type.Object(
  { data: Type.Array(ref(UsageRowView)), totals: Type.Object(Counters, { additionalProperties: false }) },
  {
    $id: "UsageReport",
    additionalProperties: false,
    description: "The ledger's rows over the days asked for, and their totals",
  },
);

const today = () => new Date().toISOString().slice(0, 10);
const monthStart = () => `${today().slice(0, 7)}-01`;

function viewOf(row: UsageRow | undefined, fields: string[]): RowView {
  const view: RowView = {};
  for (const f of fields) view[f] = (row?.[f as keyof UsageRow] as string | undefined) ?? "";
  for (const c of COUNTERS) view[c] = Number(row?.[c] ?? 0);
  return view;
}

/** A CSV field: quoted when it holds a comma, quote or line break; a leading formula sign defused. */
function csvField(value: string | number): string {
  let text = String(value);
  if (/^[=+\-@]/.test(text) && typeof value === "string") text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvOf(rows: RowView[], fields: string[]): string {
  const columns = [...fields, ...COUNTERS];
  const lines = [columns.join(",")];
  for (const r of rows) lines.push(columns.map((c) => csvField(r[c] ?? "")).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

const wantsCsv = (request: FastifyRequest, format: string | undefined) =>
  format === "csv" || (format === undefined && /\btext\/csv\b/.test(request.headers.accept ?? ""));

export function registerUsageRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { usage } = deps.clients;
  const op = operations({ tags: ["usage"], stability: "beta" });
  const Day = Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "a UTC day, YYYY-MM-DD" });
  app.get(
    "/api/usage",
    op("getUsage", "What an organization's runs used per day, model, API key, prompt, skill, agent or connection", {
      querystring: Type.Object(
        {
          organizationId: Type.Optional(OrganizationId),
          from: Type.Optional({ ...Day, description: "first UTC day, inclusive; default the month's first" }),
          to: Type.Optional({ ...Day, description: "last UTC day, inclusive; default today" }),
          groupBy: Type.Optional(OneOf([...GROUPS])),
          format: Type.Optional(OneOf(["json", "csv"])),
        },
        { additionalProperties: false },
      ),
      response: {
        200: {
          description: "The usage as JSON; as CSV (one row a line, the key fields then the counters) when asked",
          content: {
            "application/json": { schema: ref(UsageReportView) },
            "text/csv": { schema: Type.String() },
          },
        },
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (request: FastifyRequest<{ Querystring: Record<string, string | undefined> }>, reply: FastifyReply) => {
      const q = request.query;
      const groupBy = (q.groupBy ?? "day") as (typeof GROUPS)[number];
      const r = await usage.getUsage(
        {
          organizationId: organizationOf(request, q.organizationId),
          from: q.from ?? monthStart(),
          to: q.to ?? today(),
          groupBy,
        },
        rpcOptions(request),
      );
      const fields = KEY_FIELDS[groupBy];
      const data = r.rows.map((row) => viewOf(row, fields));
      if (wantsCsv(request, q.format)) {
        return reply.type("text/csv; charset=utf-8").send(csvOf(data, fields));
      }
      // The rows' fields are the grouping's: built by name, checked by the response schema.
      return { data, totals: viewOf(r.totals, []) } as unknown as Static<typeof UsageReportView>;
    },
  );
}
