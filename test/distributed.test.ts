import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { status as grpcStatus, type ServiceError } from "@grpc/grpc-js";
import { IdentityService } from "@kiln/proto/identity";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Distributed, startDistributed } from "./support/distributed.js";
import { callUnary } from "./support/grpc-js.js";
import { call, eventually, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";

// The distributed mode as real processes (gateway + four services) against FerretDB and nats-server.
describe("distributed mode", () => {
  let kiln: Distributed;
  let flow: FlowResult;

  beforeAll(async () => {
    kiln = await startDistributed({ mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") });
    flow = await runIdentityFlow(kiln.gatewayUrl);
  }, 120_000);

  afterAll(async () => {
    await kiln?.stop();
  });

  it("runs the identity flow through the gateway", async () => {
    // runIdentityFlow asserted every step; a second user proves the data lives in the shared store.
    const other = await runIdentityFlow(kiln.gatewayUrl);
    expect(other.organizationId).not.toBe(flow.organizationId);
  });

  it("refuses another organization to a user and to a key", async () => {
    const other = await runIdentityFlow(kiln.gatewayUrl);
    const list = await call(kiln.gatewayUrl, "GET", `/api/api-keys?organizationId=${other.organizationId}`, {
      token: flow.token,
    });
    expect(list.status).toBe(404);
    expect(list.body.error.code).toBe("not_found");
    const verify = await call(kiln.gatewayUrl, "POST", "/api/setup/verify", {
      token: flow.apiKey,
      body: { organizationId: other.organizationId },
    });
    expect(verify.status).toBe(200);
    expect(verify.body.ok).toBe(false);
    expect(verify.body.checks).toContainEqual(expect.objectContaining({ name: "organization", ok: false }));
  });

  it("stops accepting a revoked key within seconds", async () => {
    const mine = await runIdentityFlow(kiln.gatewayUrl);
    const revoke = await call(kiln.gatewayUrl, "DELETE", `/api/api-keys/${mine.apiKeyId}`, { token: mine.token });
    expect(revoke.status).toBe(200);
    expect(Date.parse(revoke.body.revokedAt)).not.toBeNaN();
    const tookMs = await eventually(
      async () => (await call(kiln.gatewayUrl, "POST", "/api/setup/verify", { token: mine.apiKey })).status === 401,
      6_000,
    );
    expect(tookMs).toBeLessThan(6_000);
  });

  describe("internal callers on the identity service's RPC", () => {
    const target = () => kiln.serviceUrls.identity.replace("http://", "");

    it("answers a @grpc/grpc-js client authenticated with an API key", async () => {
      const res = await callUnary(
        target(),
        IdentityService,
        IdentityService.method.verifySetup,
        {},
        {
          authorization: `Bearer ${flow.apiKey}`,
        },
      );
      expect(res.ok).toBe(true);
      expect(res.principal).toMatchObject({ type: "api_key", id: flow.apiKeyId, organizationId: flow.organizationId });
      expect(res.organization?.id).toBe(flow.organizationId);
    });

    it("refuses a @grpc/grpc-js call without credentials or with a forged one", async () => {
      const none = callUnary(target(), IdentityService, IdentityService.method.verifySetup, {}, {});
      await expect(none).rejects.toMatchObject({ code: grpcStatus.UNAUTHENTICATED });
      const forged = `${flow.apiKey.slice(0, -4)}AAAA`;
      const bad = callUnary(
        target(),
        IdentityService,
        IdentityService.method.verifySetup,
        {},
        {
          authorization: `Bearer ${forged}`,
        },
      );
      await expect(bad).rejects.toMatchObject({ code: grpcStatus.UNAUTHENTICATED });
      // The user's access token is for the gateway, not an internal token: services refuse it.
      const userToken = callUnary(
        target(),
        IdentityService,
        IdentityService.method.verifySetup,
        {},
        {
          authorization: `Bearer ${flow.token}`,
        },
      );
      await expect(userToken).rejects.toMatchObject({ code: grpcStatus.UNAUTHENTICATED });
    });

    it("keeps the service-only calls to services", async () => {
      const err = (await callUnary(
        target(),
        IdentityService,
        IdentityService.method.verifyApiKey,
        { key: flow.apiKey },
        {
          "x-api-key": flow.apiKey,
        },
      ).catch((e: ServiceError) => e)) as ServiceError;
      expect(err.code).toBe(grpcStatus.PERMISSION_DENIED);
    });

    it("answers Connect clients over gRPC and the Connect protocol", async () => {
      for (const transport of [
        createGrpcTransport({ baseUrl: kiln.serviceUrls.identity }),
        createConnectTransport({ baseUrl: kiln.serviceUrls.identity, httpVersion: "2" }),
      ]) {
        const client = createClient(IdentityService, transport);
        const res = await client.verifySetup({}, { headers: { "x-api-key": flow.apiKey } });
        expect(res.principal?.id).toBe(flow.apiKeyId);
        const err = await client
          .createApiKey(
            { organizationId: flow.organizationId, name: "x", scopes: ["runs:read"] },
            { headers: { "x-api-key": flow.apiKey } },
          )
          .catch((e: unknown) => ConnectError.from(e));
        // Keys cannot mint keys: key management needs a signed-in owner or admin.
        expect(err).toBeInstanceOf(ConnectError);
        expect((err as ConnectError).code).toBe(Code.PermissionDenied);
      }
    });
  });
});
