import type { ModelPricing } from "@kiln/proto/execution";
import Type from "typebox";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { listPage } from "../http/list-page.js";
import { listAnswers, operation } from "../http/operation.js";
import { principalOf, rpcOptions } from "../http/request.js";
import { OrganizationId } from "./catalog-requests.js";
import { ModelView } from "./model-views.js";

/** GET /api/models (stable: model discovery). */
export function registerModelRoutes(app: GatewayApp, deps: GatewayDeps): void {
  app.get(
    "/api/models",
    operation(
      { tags: ["models"], stability: "stable" },
      "listModels",
      "The models this deployment offers, with prices per million tokens; with an organization, its connections' too",
      {
        querystring: Type.Object({
          organizationId: Type.Optional({
            ...OrganizationId,
            description: "adds the organization's provider connection models (an API key: its organization's)",
          }),
        }),
        response: listAnswers(ModelView, 401, 404),
      },
    ),
    async (request) => {
      const principal = principalOf(request);
      const organizationId =
        request.query.organizationId ?? (principal.type === "api_key" ? principal.organizationId : "");
      const r = await deps.clients.execution.listModels({ organizationId }, rpcOptions(request));
      return listPage(r.models, (m) => ({
        id: m.id,
        provider: m.provider,
        model: m.model,
        available: m.available,
        capabilities: {
          tools: m.capabilities?.tools ?? false,
          jsonSchema: m.capabilities?.jsonSchema ?? false,
          input: (m.capabilities?.input ?? ["text"]).filter((i) => i === "text" || i === "image"),
        },
        pricing: {
          inputPerMTokUsd: m.pricing?.inputPerMtokUsd ?? null,
          outputPerMTokUsd: m.pricing?.outputPerMtokUsd ?? null,
          ...optionalPrices(m.pricing),
        },
        ...(m.connectionId && { connectionId: m.connectionId }),
        ...(m.tokensPerMinute !== undefined && { tokensPerMinute: m.tokensPerMinute }),
      }));
    },
  );
}

/** The class prices the table has (docs/providers.md "How usage is priced"); an absent one falls back. */
function optionalPrices(p: ModelPricing | undefined) {
  return {
    ...(p?.cachedInputPerMtokUsd !== undefined ? { cachedInputPerMTokUsd: p.cachedInputPerMtokUsd } : {}),
    ...(p?.cacheWritePerMtokUsd !== undefined ? { cacheWritePerMTokUsd: p.cacheWritePerMtokUsd } : {}),
    ...(p?.reasoningPerMtokUsd !== undefined ? { reasoningPerMTokUsd: p.reasoningPerMtokUsd } : {}),
  };
}
