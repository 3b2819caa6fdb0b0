import type { InternalTokens } from "@kiln/kit/auth";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import { defineService, type ServiceModule } from "@kiln/kit/rpc/server";
import type { Store } from "@kiln/kit/store";
import { createModelCatalog } from "./domain/model-catalog.js";
import { registerExecutionRpc } from "./rpc/execution-rpc.js";

export interface ExecutionServiceDeps {
  logger: Logger;
  store: Store;
  bus: Bus;
  tokens: InternalTokens;
  identityAuth: IdentityAuth;
  /** Providers with credentials in this deployment, e.g. ["openai"]. */
  configuredProviders: string[];
}

export async function createExecutionService(deps: ExecutionServiceDeps): Promise<ServiceModule> {
  const models = createModelCatalog({ configuredProviders: deps.configuredProviders });
  return defineService({
    name: "execution",
    logger: deps.logger,
    register: (router) => registerExecutionRpc(router, models),
    readiness: [
      { name: "store", check: () => deps.store.ping() },
      { name: "bus", check: () => deps.bus.ping() },
    ],
    auth: { tokens: deps.tokens, verifyApiKey: (key) => deps.identityAuth.verifyApiKey(key) },
  });
}
