/**
 * Where budgets hold (docs/budgets.md "How a budget holds"): checked where every stored run starts,
 * before any provider call, with no read on the way. Each process keeps, per organization that
 * has budgets, its budgets (read again every `budgetsTtlMs`, at once after a change made here) and
 * the spend of their scopes: the ledger's flushed totals as last read (every `refreshMs` in the
 * background while the organization runs) plus the cost of the runs it stored itself that this
 * read does not include (not counted yet, or counted after the read began: ledger-lock.ts keeps a
 * read apart from this process's flushes, so none counts twice). A run in flight has no cost yet: the runs in flight when a budget
 * is crossed are the overspend within one process; run-allowance.ts is the same design for runs.
 */
import { DomainError } from "@kiln/kit/errors";
import type { RunDoc } from "../store/run-store.js";
import { type LedgerLock, noLedgerLock } from "../usage/ledger-lock.js";
import { type BudgetDoc, type BudgetedRun, ledgerScopeOf, periodOf, runScopes } from "./budget-store.js";

export interface BudgetGateDeps {
  budgetsOf(organizationId: string): Promise<BudgetDoc[]>;
  /** The ledger's cost per period name and scope, for these scopes. */
  ledgerSpendOf(organizationId: string, periods: string[], scopes: string[]): Promise<Map<string, Map<string, number>>>;
  /** A threshold of a budget reached in a period (once per process and period; alerts dedupe across replicas). */
  onThreshold?(budget: BudgetDoc, period: ReturnType<typeof periodOf>, threshold: number, spentUsd: number): void;
  /** How often the spend is read again in the background while the organization runs; default 1000 ms. */
  refreshMs?: number;
  /** A spend read longer ago is read again before a run is admitted; default 2 × refreshMs. */
  staleMs?: number;
  budgetsTtlMs?: number;
  /** How long after a run this process stored the ledger is trusted to have counted it; default 5000 ms. */
  settleMs?: number;
  /** The usage ledger's lock, shared with its flushes. */
  lock?: LedgerLock;
  now?: () => Date;
}

interface LocalRun {
  /** The sums it adds to ("<period>|<scope>"), worked out once when it is stored. */
  keys: string[];
  costUsd: number;
  storedAtMs: number;
  /** When this process's ledger told it counted (a tick of the gate's clock). */
  countedAt?: number;
}

/** A budget with its ledger scope worked out once, when the budgets are read. */
interface Held {
  doc: BudgetDoc;
  scope: string;
}

interface OrgState {
  budgets: BudgetDoc[];
  held: Held[];
  /** The blocking budgets by ledger scope: a run looks up its own scopes only. */
  blocking: Map<string, Held[]>;
  budgetsAtMs: number;
  budgetsSeeded: boolean;
  /** Counts the changes made here: a read that started before the last change is not kept. */
  generation: number;
  loading: Promise<void> | undefined;
  loadingGeneration: number;
  /** The ledger's cost by period name, then scope, for `ledgerPeriods` and `ledgerScopes`. */
  ledger: Map<string, Map<string, number>>;
  ledgerPeriods: string;
  ledgerScopes: Set<string>;
  ledgerAtMs: number;
  reading: Promise<void> | undefined;
  /** The runs stored here that the last read does not include, and their cost by period and scope. */
  local: Map<string, LocalRun>;
  localSum: Map<string, number>;
  /** Of those, the ones the ledger has not counted yet. */
  uncountedSum: Map<string, number>;
  fired: Set<string>;
}

const MAX_ORGANIZATIONS = 10_000;

export function createBudgetGate(deps: BudgetGateDeps) {
  const refreshMs = deps.refreshMs ?? 1_000;
  const staleMs = deps.staleMs ?? 2 * refreshMs;
  const budgetsTtlMs = deps.budgetsTtlMs ?? 5_000;
  const settleMs = deps.settleMs ?? 5_000;
  const now = deps.now ?? (() => new Date());
  const lock = deps.lock ?? noLedgerLock;
  const states = new Map<string, OrgState>();
  // Orders a read's start after the counts told before it.
  let clock = 0;

  function stateOf(organizationId: string): OrgState {
    let s = states.get(organizationId);
    if (s) return s;
    if (states.size >= MAX_ORGANIZATIONS) states.delete(states.keys().next().value as string);
    s = {
      budgets: [],
      held: [],
      blocking: new Map(),
      budgetsAtMs: 0,
      budgetsSeeded: false,
      generation: 0,
      loading: undefined,
      loadingGeneration: -1,
      ledger: new Map(),
      ledgerPeriods: "",
      ledgerScopes: new Set(),
      ledgerAtMs: 0,
      reading: undefined,
      local: new Map(),
      localSum: new Map(),
      uncountedSum: new Map(),
      fired: new Set(),
    };
    states.set(organizationId, s);
    return s;
  }

  function loadBudgets(organizationId: string, s: OrgState): Promise<void> {
    // A read in flight from before a change made here would bring back the budgets before it.
    if (s.loading && s.loadingGeneration === s.generation) return s.loading;
    const generation = s.generation;
    s.loadingGeneration = generation;
    const loading = deps
      .budgetsOf(organizationId)
      .then((budgets) => {
        if (generation !== s.generation) return;
        s.budgets = budgets;
        s.held = budgets.map((doc) => ({ doc, scope: ledgerScopeOf(doc.scope) }));
        s.blocking = new Map();
        for (const h of s.held) {
          if (h.doc.action === "block") s.blocking.set(h.scope, [...(s.blocking.get(h.scope) ?? []), h]);
        }
        s.budgetsAtMs = now().getTime();
        s.budgetsSeeded = true;
        // A scope the last read did not cover (a budget new here) is read before the next admission.
        if (s.held.some((h) => !s.ledgerScopes.has(h.scope))) s.ledgerAtMs = 0;
      })
      .finally(() => {
        if (s.loading === loading) s.loading = undefined;
      });
    s.loading = loading;
    return loading;
  }

  const periodsAt = (at: Date) => [periodOf("day", at).name, periodOf("month", at).name];
  /** The day names the month too: the key of the periods the ledger was read for. */
  const periodsKey = (at: Date) => periodOf("day", at).name;
  const localKey = (period: string, scope: string) => `${period}|${scope}`;

  function addTo(sums: Map<string, number>, run: LocalRun, sign: 1 | -1) {
    for (const k of run.keys) sums.set(k, (sums.get(k) ?? 0) + sign * run.costUsd);
  }

  function dropLocal(s: OrgState, runId: string, run: LocalRun) {
    addTo(s.localSum, run, -1);
    if (run.countedAt === undefined) addTo(s.uncountedSum, run, -1);
    s.local.delete(runId);
  }

  function readLedger(organizationId: string, s: OrgState, at: Date): Promise<void> {
    const periods = periodsAt(at);
    const scopes = [...new Set(s.held.map((h) => h.scope))];
    let startedAt = 0;
    s.reading ??= lock
      .read(() => {
        startedAt = ++clock;
        return deps.ledgerSpendOf(organizationId, periods, scopes);
      })
      .then((read) => {
        // A new day or month: what was known of the last one no longer limits anything.
        if (s.ledgerPeriods !== periodsKey(at)) s.fired.clear();
        s.ledger = read;
        s.ledgerPeriods = periodsKey(at);
        s.ledgerScopes = new Set(scopes);
        s.ledgerAtMs = at.getTime();
        for (const [runId, run] of s.local) {
          // Counted before the read began (the read has it), or long enough ago that another replica's ledger has.
          const included = run.countedAt !== undefined && run.countedAt < startedAt;
          if (included || run.storedAtMs < at.getTime() - settleMs) dropLocal(s, runId, run);
        }
        checkThresholds(s, now());
      })
      .finally(() => {
        s.reading = undefined;
      });
    return s.reading;
  }

  const spentOf = (s: OrgState, period: string, scope: string) =>
    (s.ledger.get(period)?.get(scope) ?? 0) + Math.max(0, s.localSum.get(localKey(period, scope)) ?? 0);

  function checkThresholds(s: OrgState, at: Date) {
    if (!deps.onThreshold) return;
    for (const { doc: b, scope } of s.held) {
      if (b.alertAt.length === 0) continue;
      const period = periodOf(b.period, at);
      const spent = spentOf(s, period.name, scope);
      for (const t of b.alertAt) {
        // A little under, for the sums of floating-point costs.
        if (spent < t * b.limitUsd - 1e-9) break;
        const key = `${b._id}|${period.name}|${t}`;
        if (s.fired.has(key)) continue;
        s.fired.add(key);
        deps.onThreshold(b, period, t, spent);
      }
    }
  }

  function refusal(b: BudgetDoc, spent: number, end: Date, at: Date): DomainError {
    const seconds = Math.max(1, Math.ceil((end.getTime() - at.getTime()) / 1000));
    return new DomainError(
      "resource_exhausted",
      `budget ${b._id} ("${b.name}") allows ${b.limitUsd} USD a ${b.period} and ${spent.toFixed(6)} USD are spent; it resets at ${end.toISOString()}`,
      [{ field: "budgetId", issue: b._id }],
      seconds,
    );
  }

  return {
    /** Admits the run or refuses it (429 resource_exhausted naming the budget, Retry-After the period's end). */
    async admit(run: BudgetedRun): Promise<void> {
      const s = stateOf(run.organizationId);
      // Again while a change made here lands during the read (the read before it is dropped).
      if (!s.budgetsSeeded) while (!s.budgetsSeeded) await loadBudgets(run.organizationId, s);
      else if (now().getTime() - s.budgetsAtMs >= budgetsTtlMs)
        void loadBudgets(run.organizationId, s).catch(() => undefined);
      if (s.budgets.length === 0) return;
      if (s.blocking.size === 0) return;
      const blocking: Held[] = [];
      for (const scope of runScopes(run)) blocking.push(...(s.blocking.get(scope) ?? []));
      if (blocking.length === 0) return;
      const at = now();
      // A view older than staleMs (the organization was idle here) is read before it admits: the
      // other replicas' spend since is at most that old, never as old as the idle time.
      const age = at.getTime() - s.ledgerAtMs;
      if (s.ledgerPeriods !== periodsKey(at) || age >= staleMs) await readLedger(run.organizationId, s, at);
      else if (age >= refreshMs) void readLedger(run.organizationId, s, at).catch(() => undefined);
      for (const { doc: b, scope } of blocking) {
        const period = periodOf(b.period, at);
        const spent = spentOf(s, period.name, scope);
        // Reached, within a nano-dollar: sums of floating-point costs land a hair under an exact limit.
        if (spent >= b.limitUsd - 1e-9) throw refusal(b, spent, period.end, at);
      }
    },
    /** The run ended; a stored one's cost counts here until the ledger has it. */
    finished(run: BudgetedRun, doc: RunDoc | undefined): void {
      if (!doc) return;
      const s = states.get(run.organizationId);
      if (!s || s.budgets.length === 0) return;
      const costUsd = doc.kind === "agent" ? 0 : (doc.estimatedCostUsd ?? 0);
      if (costUsd <= 0) return;
      const scopes = runScopes(run);
      const local = {
        keys: periodsAt(doc.completedAt).flatMap((p) => scopes.map((scope) => localKey(p, scope))),
        costUsd,
        storedAtMs: now().getTime(),
      };
      s.local.set(doc._id, local);
      addTo(s.localSum, local, 1);
      addTo(s.uncountedSum, local, 1);
      // An organization with alert budgets only is never read by admit: its thresholds need the ledger too.
      const at = now();
      if (s.ledgerPeriods !== periodsKey(at) || at.getTime() - s.ledgerAtMs >= refreshMs)
        void readLedger(run.organizationId, s, at).catch(() => undefined);
      checkThresholds(s, at);
    },
    /** This process's ledger counted these runs (usage-ledger.ts onCounted): the next read has them. */
    counted(organizationId: string, runIds: string[]): void {
      const s = states.get(organizationId);
      if (!s) return;
      for (const id of runIds) {
        const run = s.local.get(id);
        if (!run || run.countedAt !== undefined) continue;
        run.countedAt = ++clock;
        addTo(s.uncountedSum, run, -1);
      }
    },
    /** What this process stored in the scope and period that the ledger has not counted yet. */
    uncounted(organizationId: string, period: string, scope: string): number {
      return Math.max(0, states.get(organizationId)?.uncountedSum.get(localKey(period, scope)) ?? 0);
    },
    /** The organization's budgets changed here: the next run reads them again. */
    invalidate(organizationId: string): void {
      const s = states.get(organizationId);
      if (!s) return;
      s.generation++;
      s.budgetsSeeded = false;
    },
  };
}

export type BudgetGate = ReturnType<typeof createBudgetGate>;
