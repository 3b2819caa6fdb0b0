/**
 * The distributed mode's processes, one per launcher command: how each starts and the schema of
 * the environment it reads. The deployment manifests are checked against this list
 * (test/deploy-manifests.test.ts), so a command or a variable cannot drift from them.
 */
import { CatalogEnv } from "@kiln/catalog/config";
import { EvaluationEnv, EvaluationWorkerEnv } from "@kiln/evaluation/config";
import { ExecutionEnv } from "@kiln/execution/config";
import { GatewayEnv } from "@kiln/gateway/config";
import { IdentityEnv } from "@kiln/identity/config";
import type { TObject } from "typebox";

export interface DistributedCommand {
  start: () => Promise<unknown>;
  /** Every variable the process reads (besides those OPENAI_COMPATIBLE_PROVIDERS names in `apiKeyEnv`). */
  env: TObject;
}

export const DISTRIBUTED_COMMANDS: Record<string, DistributedCommand> = {
  gateway: { start: () => import("@kiln/gateway/main"), env: GatewayEnv },
  identity: { start: () => import("@kiln/identity/main"), env: IdentityEnv },
  catalog: { start: () => import("@kiln/catalog/main"), env: CatalogEnv },
  execution: { start: () => import("@kiln/execution/main"), env: ExecutionEnv },
  evaluation: { start: () => import("@kiln/evaluation/main"), env: EvaluationEnv },
  "evaluation-worker": { start: () => import("@kiln/evaluation/worker-main"), env: EvaluationWorkerEnv },
};
