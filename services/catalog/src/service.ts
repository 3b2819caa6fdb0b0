import type { InternalTokens } from "@kiln/kit/auth";
import type { IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import type { Logger } from "@kiln/kit/logger";
import { defineService, type ServiceModule } from "@kiln/kit/rpc/server";
import type { Store } from "@kiln/kit/store";

export interface CatalogServiceDeps {
  logger: Logger;
  store: Store;
  bus: Bus;
  tokens: InternalTokens;
  identityAuth: IdentityAuth;
}

/** The catalog service. Its RPCs arrive with the catalog issue; today it serves health and readiness. */
export async function createCatalogService(deps: CatalogServiceDeps): Promise<ServiceModule> {
  return defineService({
    name: "catalog",
    logger: deps.logger,
    register: () => {},
    readiness: [
      { name: "store", check: () => deps.store.ping() },
      { name: "bus", check: () => deps.bus.ping() },
    ],
    auth: { tokens: deps.tokens, verifyApiKey: (key) => deps.identityAuth.verifyApiKey(key) },
  });
}
