/**
 * Runs by id at scale on FerretDB 1.24 on PostgreSQL (docs/deploy.md "The store",
 * docs/architecture.md "Store backends"). 100,000 runs are stored through Kiln's own store code
 * (the Mongo store, execution's run collection and its indexes), then:
 * - as FerretDB leaves the tables, a run by id is read by a sequential scan: FerretDB sends an
 *   equality as jsonb containment (`_jsonb->'_id' @> '"<id>"'`), which the btree indexes it made
 *   cannot answer, and PostgreSQL never counts a scan of them;
 * - after scripts/ferretdb-postgresql-id-indexes.sql, each by-id read the API makes (a prompt, a
 *   skill and an agent run, getRun's `findOne({_id})`) is a read of the GIN index the script adds,
 *   in FerretDB's explain and in PostgreSQL's counters; a database FerretDB creates after the
 *   script gets the index too (the script's event trigger);
 * - an organization's page of runs (findPage, first page and after a cursor) reaches PostgreSQL
 *   with its organization filter, but FerretDB 1.24 never pushes a sort down: no index read, the
 *   organization's runs are read and sorted in FerretDB; what the docs say, checked.
 * It prints the insert rate and the by-id latency at 100,000 runs against 100 (ratios, no timed
 * assertion). Its own PostgreSQL and FerretDB; the rest of the suite stays on SQLite FerretDB.
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { newId } from "@kiln/kit/ids";
import { findPage } from "@kiln/kit/pagination";
import type { Collection, Filter, Store } from "@kiln/kit/store";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { type Document, MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureRunIndexes, type RunDoc, runCollection } from "../services/execution/src/store/run-store.js";
import { type RunningPostgres, type RunningServer, startFerretDb, startPostgres } from "./support/servers.js";

const RUNS = 100_000;
const SMALL = 100;
const BATCH = 1_000;
const IN_FLIGHT = 4;
const READS = 20;
const SCRIPT = join(import.meta.dirname, "..", "scripts", "ferretdb-postgresql-id-indexes.sql");
const KINDS = ["prompt", "skill", "agent"] as const;
const ID_PREFIX = { prompt: "run", skill: "srun", agent: "arun" } as const;
const ORGS = Array.from({ length: 10 }, () => newId("org"));
/** An organization of 100 runs among the 100,000, for its pages. */
const SMALL_ORG = newId("org");

function run(i: number, organizationId: string): RunDoc {
  const at = new Date();
  const kind = KINDS[i % 3] as (typeof KINDS)[number];
  return {
    _id: newId(ID_PREFIX[kind]),
    kind,
    organizationId,
    status: "succeeded",
    inputJson: JSON.stringify({ name: `caller ${i}` }),
    outputJson: JSON.stringify(`Hello caller ${i}, here is a reply of ordinary length for a prompt run.`),
    provider: "local",
    model: "echo",
    usage: { inputTokens: 12, outputTokens: 24 },
    estimatedCostUsd: 0,
    latencyMs: 3,
    toolCallCount: 0,
    toolCallCounts: [],
    toolCallsJson: "[]",
    stepsJson: "[]",
    error: null,
    promptId: newId("prm"),
    promptVersionId: newId("pv"),
    skillId: "",
    skillVersionId: "",
    ...(i % 3 === 2 ? { agentId: newId("agt"), agentVersionId: newId("av") } : {}),
    createdAt: at,
    completedAt: at,
  };
}

/** Stores `count` runs in batches, IN_FLIGHT batches at a time; every 1000th is SMALL_ORG's when `withSmallOrg`. */
async function storeRuns(runs: Collection<RunDoc>, count: number, withSmallOrg: boolean): Promise<RunDoc[]> {
  const docs = Array.from({ length: count }, (_, i) =>
    run(i, withSmallOrg && i % 1_000 === 500 ? SMALL_ORG : (ORGS[i % ORGS.length] as string)),
  );
  let next = 0;
  const worker = async () => {
    for (let at = next; at < docs.length; at = next) {
      next += BATCH;
      await runs.insertMany(docs.slice(at, at + BATCH));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return docs;
}

/** Every node of a PostgreSQL plan (EXPLAIN FORMAT JSON, as FerretDB's explain answers it). */
function planNodes(plan: Document): Document[] {
  return [plan, ...((plan.Plans as Document[] | undefined) ?? []).flatMap(planNodes)];
}

/** Median ms of findOne by _id over `ids` (spread over the collection, so a scan cannot stop early). */
async function byIdLatency(runs: Collection<RunDoc>, ids: string[]): Promise<number> {
  const times: number[] = [];
  for (const id of ids) {
    const start = performance.now();
    expect((await runs.findOne({ _id: id }))?._id).toBe(id);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

/** The plan reads no index: a (possibly parallel) sequential scan filtering on `filtered`. */
function expectScanOnly(explained: Document, filtered: string) {
  const nodes = planNodes(explained.queryPlanner.Plan);
  expect(nodes.filter((n) => String(n["Node Type"]).includes("Index"))).toEqual([]);
  const scan = nodes.find((n) => n["Node Type"] === "Seq Scan");
  expect(scan?.Filter).toContain(filtered);
}

const ferretPortOf = (url: string) => Number(new URL(url).port);

const spread = (docs: RunDoc[], n: number) =>
  Array.from({ length: n }, (_, i) => (docs[Math.floor(((i + 0.5) * docs.length) / n)] as RunDoc)._id);

describe("runs by id at 100,000 on FerretDB on PostgreSQL", () => {
  let postgres: RunningPostgres;
  let ferretdb: RunningServer;
  let store: Store;
  let driver: MongoClient;
  let docs: RunDoc[];
  const report: Record<string, number> = {};

  const explainFind = (database: string, filter: Filter, options: { sort?: Document; limit: number }) =>
    driver.db(database).command({ explain: { find: "runs", filter, ...options } });
  /** PostgreSQL's scan counters of database `schema`'s runs table (FerretDB: one schema per database). */
  const counters = async (schema: string) => {
    const rows = await postgres.psql("ferretdb", [
      "-c",
      `SELECT i.indexrelname, i.idx_scan, t.seq_scan FROM pg_stat_user_indexes i JOIN pg_stat_user_tables t
       ON t.relid = i.relid WHERE i.schemaname = '${schema}' AND i.relname LIKE 'runs\\_%'`,
    ]);
    const indexes = new Map<string, number>();
    let seqScans = 0;
    for (const line of rows.trim().split("\n").filter(Boolean)) {
      const [name, idx, seq] = line.split("|");
      indexes.set(name as string, Number(idx));
      seqScans = Number(seq);
    }
    return { indexes, seqScans };
  };
  /** Counters are flushed by each PostgreSQL backend within about a second of going idle. */
  const countersWhen = async (schema: string, ready: (c: Awaited<ReturnType<typeof counters>>) => boolean) => {
    for (let waited = 0; ; waited += 250) {
      const c = await counters(schema);
      if (ready(c) || waited > 15_000) return c;
      await sleep(250);
    }
  };

  beforeAll(async () => {
    postgres = await startPostgres();
    await postgres.createDatabase("ferretdb");
    ferretdb = await startFerretDb({ postgresqlUrl: postgres.databaseUrl("ferretdb") });
    store = createMongoStore({ url: ferretdb.url, database: "scale" });
    driver = new MongoClient(ferretdb.url);
    await ensureRunIndexes(store);
    const start = performance.now();
    docs = await storeRuns(runCollection(store), RUNS, true);
    report.insertMs = Math.round(performance.now() - start);
    report.insertPerSecond = Math.round((RUNS / report.insertMs) * 1000);
  }, 240_000);

  afterAll(async () => {
    console.log("store scale (FerretDB 1.24 on PostgreSQL)", report);
    await driver?.close();
    await store?.close();
    await ferretdb?.stop({ removeData: true });
    await postgres?.stop({ removeData: true });
  });

  it("as FerretDB leaves it, a run by id is a sequential scan: its btree indexes are never read", async () => {
    const id = (docs[RUNS / 2] as RunDoc)._id;
    const explained = await explainFind("scale", { _id: id }, { limit: 1 });
    expect(explained.filterPushdown).toBe(true);
    expectScanOnly(explained, "@>");

    const before = await counters("scale");
    // FerretDB's _id index, (organizationId, _id) and (organizationId, createdAt, _id): ensureRunIndexes.
    expect([...before.indexes.keys()].length).toBe(3);
    report.byIdMsAt100kNoIndex = await byIdLatency(runCollection(store), spread(docs, 5));
    const after = await countersWhen("scale", (c) => c.seqScans >= before.seqScans + 5);
    expect(after.seqScans).toBeGreaterThanOrEqual(before.seqScans + 5);
    for (const [name, scans] of after.indexes) expect({ name, scans }).toEqual({ name, scans: 0 });
  }, 120_000);

  it("after the id-index script, the prompt, skill and agent run by id are GIN index reads", async () => {
    await postgres.psql("ferretdb", ["-q", "-f", SCRIPT]);
    // As docs/deploy.md says: FerretDB restarted, so its connections plan with the new setting.
    await ferretdb.stop();
    ferretdb = await startFerretDb({
      dir: ferretdb.dir,
      port: ferretPortOf(ferretdb.url),
      postgresqlUrl: postgres.databaseUrl("ferretdb"),
    });
    const gin = [...(await counters("scale")).indexes.keys()].find((n) => n.endsWith("_kiln_id_gin"));
    expect(gin).toBeDefined();
    await postgres.psql("ferretdb", ["-c", "ANALYZE"]);

    for (const kind of KINDS) {
      const one = docs.findLast((d) => d.kind === kind) as RunDoc;
      const explained = await explainFind("scale", { _id: one._id }, { limit: 1 });
      expect(explained.filterPushdown).toBe(true);
      const scan = planNodes(explained.queryPlanner.Plan).find((n) => n["Node Type"] === "Bitmap Index Scan");
      expect(scan?.["Index Name"]).toBe(gin);
    }
    const before = await counters("scale");
    const runs = runCollection(store);
    report.byIdMsAt100k = await byIdLatency(runs, spread(docs, READS));
    const after = await countersWhen(
      "scale",
      (c) => (c.indexes.get(gin as string) ?? 0) >= (before.indexes.get(gin as string) ?? 0) + READS,
    );
    expect(after.indexes.get(gin as string)).toBeGreaterThanOrEqual((before.indexes.get(gin as string) ?? 0) + READS);

    // A database FerretDB creates after the script: the event trigger gives its table the index.
    const small = createMongoStore({ url: ferretdb.url, database: "small" });
    try {
      await ensureRunIndexes(small);
      const smallDocs = await storeRuns(runCollection(small), SMALL, false);
      const indexes = await postgres.psql("ferretdb", [
        "-c",
        "SELECT indexname FROM pg_indexes WHERE schemaname = 'small' AND tablename LIKE 'runs\\_%'",
      ]);
      expect(indexes.split("\n").filter((n) => n.endsWith("_kiln_id_gin"))).toHaveLength(1);
      report.byIdMsAt100 = await byIdLatency(runCollection(small), spread(smallDocs, READS));
    } finally {
      await small.close();
    }
    const { byIdMsAt100kNoIndex = 0, byIdMsAt100k = 0, byIdMsAt100 = 0 } = report;
    report.byIdRatio100kTo100 = Math.round((byIdMsAt100k / byIdMsAt100) * 100) / 100;
    report.byIdSpeedupFromIndex = Math.round(byIdMsAt100kNoIndex / byIdMsAt100k);
  }, 120_000);

  it("an organization's pages reach PostgreSQL with their filter, but no sort: no index read", async () => {
    const runs = runCollection(store);
    // findPage's own queries, read for real and explained as they were sent.
    const sent: Filter[] = [];
    const recording: Collection<RunDoc> = {
      ...runs,
      find: (filter, options) => {
        sent.push(filter);
        return runs.find(filter, options);
      },
    };
    const seen: string[] = [];
    let cursor = "";
    const start = performance.now();
    do {
      const page = await findPage(recording, { organizationId: SMALL_ORG }, { limit: 50, cursor });
      seen.push(...page.items.map((r) => r._id));
      cursor = page.nextCursor;
    } while (cursor);
    report.smallOrgPagesMsAt100k = Math.round(performance.now() - start);
    expect(seen).toEqual(
      docs
        .filter((d) => d.organizationId === SMALL_ORG)
        .map((d) => d._id)
        .sort((a, b) => (a < b ? 1 : -1)),
    );
    expect(sent.length).toBe(2);
    for (const filter of [...sent, { organizationId: SMALL_ORG, kind: "agent" }]) {
      const explained = await explainFind("scale", filter, { sort: { _id: -1 }, limit: 51 });
      expect({ filter, pushdown: explained.filterPushdown }).toEqual({ filter, pushdown: true });
      expect(explained.sortPushdown).toBe(false);
      expectScanOnly(explained, SMALL_ORG);
    }
  }, 120_000);
});
