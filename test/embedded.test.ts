import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";
import { call, runIdentityFlow } from "./support/identity-flow.js";

// The embedded mode (one process, in-memory store, in-process bus) over a real HTTP socket.
describe("embedded mode", () => {
  let kiln: EmbeddedKiln;
  let base: string;

  beforeAll(async () => {
    ({ kiln, baseUrl: base } = await startEmbedded());
  });

  afterAll(async () => {
    await kiln?.close();
  });

  it("runs the identity flow through the gateway", async () => {
    const flow = await runIdentityFlow(base);
    const revoke = await call(base, "DELETE", `/api/api-keys/${flow.apiKeyId}`, { token: flow.token });
    expect(revoke.status).toBe(200);
    // This gateway revoked the key, so it refuses it at once.
    const after = await call(base, "POST", "/api/setup/verify", { token: flow.apiKey });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe("unauthenticated");
  });

  it("is ready when every in-process service is", async () => {
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
  });
});
