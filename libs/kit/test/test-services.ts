import type { ServiceImpl } from "@connectrpc/connect";
import { ExecutionService } from "@kiln/proto/execution";
import { createInternalTokens } from "../src/auth/internal-token.js";
import { createLogger } from "../src/logger.js";
import { defineService, type ServiceModule } from "../src/rpc/rpc-server.js";

/** The internal tokens the RPC tests' services accept (and their callers sign with). */
export const testTokens = createInternalTokens("x".repeat(32));

/**
 * For the RPC tests: a service named `name` answering ExecutionService with `impl`, behind the
 * kit's interceptors (internal tokens of `testTokens`, no API keys), logging nothing.
 */
export function executionTestService(
  name: string,
  impl: Partial<ServiceImpl<typeof ExecutionService>>,
  contextValues?: ServiceModule["contextValues"],
): ServiceModule {
  return defineService({
    name,
    logger: createLogger({ name, level: "silent" }),
    register: (router) => router.service(ExecutionService, impl),
    readiness: [],
    auth: { tokens: testTokens, verifyApiKey: async () => Promise.reject(new Error("no keys")) },
    contextValues,
  });
}
