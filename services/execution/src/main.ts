import { createClient } from "@connectrpc/connect";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { runServiceProcess } from "@kiln/kit/rpc/run-service";
import { createNetworkTransport } from "@kiln/kit/rpc/transport";
import { CatalogService } from "@kiln/proto/catalog";
import { loadConfig } from "./config.js";
import { createExecutionService } from "./service.js";

const config = loadConfig();
await runServiceProcess("execution", config, async ({ logger, store, bus, tokens, identity }) => {
  if (!bus || !identity) throw new Error("execution needs NATS_URL and IDENTITY_URL");
  // Calls to the catalog carry the caller's principal (or act as the execution service).
  const catalog = createNetworkTransport({
    baseUrl: config.CATALOG_URL,
    interceptors: [createForwardInterceptor(tokens, { type: "service", id: "execution" })],
    logger,
  });
  const service = await createExecutionService({
    logger,
    store,
    bus,
    tokens,
    identityAuth: identity.auth,
    catalog: createClient(CatalogService, catalog.transport),
    providers: config.providers,
    tools: config.tools,
  });
  return {
    ...service,
    // The catalog client closes only once the server has drained: calls still finishing need it.
    async settle() {
      await service.settle();
      catalog.close();
    },
  };
});
