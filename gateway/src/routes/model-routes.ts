import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { rpcOptions } from "../http/request.js";
import { errorResponses, List, ref } from "../schemas.js";
import { ModelView } from "./model-views.js";

/** GET /api/models (stable: model discovery). */
export function registerModelRoutes(app: GatewayApp, deps: GatewayDeps): void {
  app.get(
    "/api/models",
    {
      config: { stability: "stable" },
      schema: {
        tags: ["models"],
        operationId: "listModels",
        summary: "The models this deployment offers, with prices per million tokens",
        response: { 200: List(ref(ModelView)), ...errorResponses(401) },
      },
    },
    async (request) => {
      const r = await deps.clients.execution.listModels({}, rpcOptions(request));
      return {
        data: r.models.map((m) => ({
          id: m.id,
          provider: m.provider,
          model: m.model,
          available: m.available,
          capabilities: { tools: m.capabilities?.tools ?? false, jsonSchema: m.capabilities?.jsonSchema ?? false },
          pricing: {
            inputPerMTokUsd: m.pricing?.inputPerMtokUsd ?? null,
            outputPerMTokUsd: m.pricing?.outputPerMtokUsd ?? null,
          },
        })),
        nextCursor: null,
      };
    },
  );
}
