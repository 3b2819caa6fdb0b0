import type { ConnectRouter } from "@connectrpc/connect";
import { ExecutionService } from "@kiln/proto/execution";
import type { ModelCatalog } from "../domain/model-catalog.js";

export function registerExecutionRpc(router: ConnectRouter, models: ModelCatalog): void {
  router.service(ExecutionService, {
    // Any authenticated caller may list models (api.md "Scopes per route").
    async listModels() {
      return {
        models: models.list().map((m) => ({
          id: m.id,
          provider: m.provider,
          model: m.model,
          available: m.available,
          capabilities: m.capabilities,
          pricing: {
            inputPerMtokUsd: m.pricing.inputPerMTokUsd ?? undefined,
            outputPerMtokUsd: m.pricing.outputPerMTokUsd ?? undefined,
          },
        })),
      };
    },
  });
}
