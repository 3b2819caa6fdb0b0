/**
 * The usage ledger and the plan's run limit in the execution process (docs/usage.md): execution
 * owns the runs the ledger counts (it reads each by id), the place runs start (where the limit is
 * checked against the ledger it keeps here, with no other service to ask per run) and the RPC
 * that reads it back.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import { serviceFor } from "@kiln/kit/principal";
import type { Store } from "@kiln/kit/store";
import type { OrganizationModels } from "@kiln/models/registry";
import { UsageService } from "@kiln/proto/usage";
import { callContext } from "../rpc/agent-rpc.js";
import type { RunDoc } from "../store/run-store.js";
import type { LedgerLock } from "./ledger-lock.js";
import { createRunAllowance } from "./run-allowance.js";
import { createUsageLedger } from "./usage-ledger.js";
import { readUsage, type UsageRow } from "./usage-reads.js";
import type { UsageCounters } from "./usage-rows.js";
import { periodIdOf, startClaimSweeper, usageCollections } from "./usage-store.js";

export interface UsagePartsDeps {
  store: Store;
  bus: Bus;
  logger: Logger;
  identityAuth: IdentityAuth;
  runs: import("@kiln/kit/store").Collection<RunDoc>;
  /** The organization's own connection models (the connection a run's model belongs to). */
  organizationModels(organizationId: string): Promise<OrganizationModels>;
  /** Also told the runs each flush counted (budgets' gate). */
  onCounted?(organizationId: string, runIds: string[]): void;
  /** Shared by the ledger's flushes and the views that read it (ledger-lock.ts). */
  ledgerLock?: LedgerLock;
  /** Ledger timings (tests): flush interval and batch. */
  ledger?: { flushIntervalMs?: number; maxBatch?: number };
}

const toProto = (r: Partial<UsageRow> & UsageCounters) => ({
  ...r,
  runs: BigInt(r.runs),
  inputTokens: BigInt(r.inputTokens),
  cachedInputTokens: BigInt(r.cachedInputTokens),
  cacheWriteInputTokens: BigInt(r.cacheWriteInputTokens),
  outputTokens: BigInt(r.outputTokens),
  reasoningTokens: BigInt(r.reasoningTokens),
  cacheHits: BigInt(r.cacheHits),
});

export async function createUsageParts(deps: UsagePartsDeps) {
  const collections = usageCollections(deps.store);
  const claimSweeper = startClaimSweeper(collections.claims, deps.logger);
  const allowance = createRunAllowance({
    lock: deps.ledgerLock,
    async monthlyRunLimitOf(organizationId) {
      // Execution acting in the organization: identity's answer (cached by identityAuth) carries its plan.
      const { organization } = await deps.identityAuth.authorize(serviceFor("execution", organizationId), {
        organizationId,
        requireAi: false,
      });
      return Number(organization?.entitlements?.monthlyRunLimit ?? 0n);
    },
    async monthRunsOf(organizationId, month) {
      const doc = await collections.periods.findOne({ _id: periodIdOf(organizationId, month) });
      return doc?.totals.runs ?? 0;
    },
  });
  const ledger = createUsageLedger({
    ...deps,
    ...deps.ledger,
    collections,
    lock: deps.ledgerLock,
    async connectionIdOf(organizationId, model) {
      if (!model) return "";
      const own = await deps.organizationModels(organizationId).catch(() => undefined);
      return own?.models.find((m) => m.id === model)?.connectionId ?? "";
    },
    onCounted: (organizationId, runIds) => {
      allowance.counted(organizationId, runIds);
      deps.onCounted?.(organizationId, runIds);
    },
  });
  await ledger.start();
  return {
    allowance,
    ledger,
    register(router: ConnectRouter) {
      router.service(UsageService, {
        async getUsage(req, ctx) {
          const { rows, totals } = await readUsage(
            { identityAuth: deps.identityAuth, periods: collections.periods },
            req,
            callContext(ctx),
          );
          return { rows: rows.map(toProto), totals: toProto(totals) };
        },
      });
    },
    async stop() {
      await claimSweeper.stop();
      await ledger.stop();
    },
  };
}
