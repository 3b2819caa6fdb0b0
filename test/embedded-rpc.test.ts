/**
 * The one-process start serves the services' RPC as the distributed mode serves each service's
 * (docs/operations.md "Calling the services directly"): every service on one h2c port, over Connect,
 * gRPC and gRPC-Web, with gRPC reflection and health, and the same authentication: API keys, and
 * internal tokens signed with INTERNAL_AUTH_SECRET (`kiln internal-token`), a service token acting
 * in its one organization only.
 */
import { randomBytes } from "node:crypto";
import { create, fromBinary, type MessageInitShape, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { API_KEY_SCOPES } from "@kiln/contracts/api-key-scopes";
import { internalTokenCommand } from "@kiln/launcher/internal-token-command";
import { CatalogService } from "@kiln/proto/catalog";
import { ExecutionService } from "@kiln/proto/execution";
import { Health, HealthCheckResponse_ServingStatus } from "@kiln/proto/health";
import { IdentityService } from "@kiln/proto/identity";
import * as reflection from "@kiln/proto/reflection/v1";
import { ReviewService } from "@kiln/proto/review";
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";
import { callUnary } from "./support/grpc-js.js";
import { startKilnProcess } from "./support/kiln-process.js";

const SECRET = randomBytes(32).toString("base64url");
const SERVICES = [
  "kiln.identity.v1.IdentityService",
  "kiln.identity.v1.ScimService",
  "kiln.identity.v1.AuditService",
  "kiln.identity.v1.SamlService",
  "kiln.catalog.v1.CatalogService",
  "kiln.execution.v1.ExecutionService",
  "kiln.evaluation.v1.EvaluationService",
  "kiln.evaluation.v1.ReviewService",
  "kiln.evaluation.v1.DatasetService",
  "kiln.evaluation.v1.OnlineEvaluationService",
  "kiln.webhooks.v1.WebhookService",
  "kiln.traces.v1.TraceService",
  "kiln.execution.v1.ModelRouteService",
  "kiln.execution.v1.ProviderConnectionService",
  "kiln.execution.v1.UsageService",
  "kiln.execution.v1.BudgetService",
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
];

interface Tenant {
  token: string;
  organizationId: string;
  promptId: string;
  apiKey: string;
  apiKeyId: string;
}

let kiln: EmbeddedKiln;
let rpcUrl: string;
let sessions: Http2SessionManager;
let a: Tenant;
let b: Tenant;

async function tenant(): Promise<Tenant> {
  const api = createTestClient(kiln.gateway.app);
  const { accessToken: token } = await api.signUp();
  const organizationId = (await api.onboard(token)).organization.id;
  const { prompt } = await api.createPublishedPrompt(token, organizationId, { systemPrompt: "hello" });
  const key = await api.createApiKey(token, organizationId, [...API_KEY_SCOPES]);
  return { token, organizationId, promptId: prompt.id, apiKey: key.key, apiKeyId: key.id };
}

/** Connect's three protocols over HTTP/2 without TLS, as an internal caller of a service's port uses them. */
function transports(): [string, Transport][] {
  const options = { baseUrl: rpcUrl, httpVersion: "2" as const, sessionManager: sessions };
  return [
    ["Connect", createConnectTransport(options)],
    ["gRPC", createGrpcTransport(options)],
    ["gRPC-Web", createGrpcWebTransport(options)],
  ];
}

const target = (url: string) => url.replace(/^http:\/\//, "");

/** One reflection request on a bidi stream of @grpc/grpc-js (what grpcurl sends), its one answer. */
async function reflect(
  url: string,
  request: MessageInitShape<typeof reflection.ServerReflectionRequestSchema>,
): Promise<MessageShape<typeof reflection.ServerReflectionResponseSchema>> {
  const client = new grpc.Client(target(url), grpc.credentials.createInsecure());
  const call = client.makeBidiStreamRequest(
    `/${reflection.ServerReflection.typeName}/ServerReflectionInfo`,
    (msg: MessageInitShape<typeof reflection.ServerReflectionRequestSchema>) =>
      Buffer.from(
        toBinary(reflection.ServerReflectionRequestSchema, create(reflection.ServerReflectionRequestSchema, msg)),
      ),
    (buf: Buffer) => fromBinary(reflection.ServerReflectionResponseSchema, buf),
  );
  try {
    return await new Promise((resolve, reject) => {
      call.on("data", (answer) => {
        resolve(answer);
        call.end();
      });
      call.on("error", reject);
      call.write(request);
    });
  } finally {
    client.close();
  }
}

async function listServices(url: string): Promise<string[]> {
  const answer = await reflect(url, { messageRequest: { case: "listServices", value: "*" } });
  return answer.messageResponse.case === "listServicesResponse"
    ? answer.messageResponse.value.service.map((s) => s.name)
    : [];
}

const readiness = (url: string) =>
  callUnary(target(url), Health, Health.method.check, { service: "readiness" }, {}).then((r) => r.status);

beforeAll(async () => {
  ({ kiln } = await startEmbedded({ internalSecret: SECRET }));
  rpcUrl = await kiln.listenRpc({ host: "127.0.0.1", port: 0 });
  sessions = new Http2SessionManager(rpcUrl);
  a = await tenant();
  b = await tenant();
});

afterAll(async () => {
  sessions?.abort();
  await kiln?.close();
});

describe("the embedded platform's RPC port", () => {
  it("lists every service through gRPC reflection, and hands out their descriptors", async () => {
    expect((await listServices(rpcUrl)).sort()).toEqual([...SERVICES].sort());
    const answer = await reflect(rpcUrl, {
      messageRequest: { case: "fileContainingSymbol", value: "kiln.catalog.v1.CatalogService.ListPrompts" },
    });
    expect(answer.messageResponse.case).toBe("fileDescriptorResponse");
    const files =
      answer.messageResponse.case === "fileDescriptorResponse"
        ? answer.messageResponse.value.fileDescriptorProto.map((f) => fromBinary(FileDescriptorProtoSchema, f).name)
        : [];
    expect(files[0]).toBe("kiln/catalog/v1/catalog.proto");
  });

  it("answers the gRPC health check, without credentials, over every protocol", async () => {
    expect(await readiness(rpcUrl)).toBe(HealthCheckResponse_ServingStatus.SERVING);
    for (const [protocol, transport] of transports()) {
      const health = createClient(Health, transport);
      expect((await health.check({ service: "" })).status, protocol).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect((await health.check({ service: "readiness" })).status, protocol).toBe(
        HealthCheckResponse_ServingStatus.SERVING,
      );
      const unknown = await health.check({ service: "nope" }).catch((e: unknown) => ConnectError.from(e));
      expect(unknown, protocol).toMatchObject({ code: Code.NotFound });
    }
  });

  it("takes a service token of `kiln internal-token` for its organization only, over every protocol", async () => {
    const token = await internalTokenCommand(["--service", "billing", "--organization", a.organizationId], {
      INTERNAL_AUTH_SECRET: SECRET,
    });
    const headers = { authorization: `Bearer ${token}` };
    for (const [protocol, transport] of transports()) {
      const catalog = createClient(CatalogService, transport);
      const listed = await catalog.listPrompts({ organizationId: a.organizationId }, { headers });
      expect(
        listed.prompts.map((p) => p.id),
        protocol,
      ).toContain(a.promptId);
      const other = await catalog
        .listPrompts({ organizationId: b.organizationId }, { headers })
        .catch((e: unknown) => ConnectError.from(e));
      expect(other, protocol).toMatchObject({ code: Code.PermissionDenied });
      const byId = await catalog.getPrompt({ id: b.promptId }, { headers }).catch((e: unknown) => ConnectError.from(e));
      expect(byId, protocol).toMatchObject({ code: Code.NotFound });
    }
  });

  it("lets a service add runs to a queue of its organization (ReviewService.AddQueueItems; docs/review.md)", async () => {
    const api = createTestClient(kiln.gateway.app);
    const t = await tenant();
    const { prompt } = await api.createPublishedPrompt(t.token, t.organizationId, {
      systemPrompt: "to review",
      model: "local/echo",
    });
    const run = await api.post<{ id: string }>(
      `/api/prompts/${prompt.id}/run`,
      { organizationId: t.organizationId, variables: {} },
      { token: t.token },
    );
    const queue = await api.post<{ id: string }>(
      "/api/annotation-queues",
      { organizationId: t.organizationId, name: "by rule" },
      { token: t.token },
    );
    const theirs = await api.post<{ id: string }>(
      "/api/annotation-queues",
      { organizationId: b.organizationId, name: "theirs" },
      { token: b.token },
    );
    const token = await internalTokenCommand(["--service", "online-rules", "--organization", t.organizationId], {
      INTERNAL_AUTH_SECRET: SECRET,
    });
    const [[, transport]] = transports() as [[string, Transport]];
    const review = createClient(ReviewService, transport);
    const headers = { authorization: `Bearer ${token}` };
    const added = await review.addQueueItems({ queueId: queue.body.id, runIds: [run.body.id] }, { headers });
    expect(added.items.map((i) => [i.targetId, i.addedBy, i.status])).toEqual([
      [run.body.id, "service:online-rules", "pending"],
    ]);
    const again = await review.addQueueItems({ queueId: queue.body.id, runIds: [run.body.id] }, { headers });
    expect(again).toMatchObject({ items: [], skipped: 1 });
    const elsewhere = await review
      .addQueueItems({ queueId: theirs.body.id, runIds: [run.body.id] }, { headers })
      .catch((e: unknown) => ConnectError.from(e));
    expect(elsewhere).toMatchObject({ code: Code.NotFound });
    // Reviewing stays with members.
    const claimed = await review
      .claimNextItem({ queueId: queue.body.id }, { headers })
      .catch((e: unknown) => ConnectError.from(e));
    expect(claimed).toMatchObject({ code: Code.PermissionDenied });
  });

  it("takes an API key from a plain gRPC client, as identity checks it at the gateway", async () => {
    const listed = await callUnary(
      target(rpcUrl),
      CatalogService,
      CatalogService.method.listPrompts,
      { organizationId: a.organizationId },
      { authorization: `Bearer ${a.apiKey}` },
    );
    expect(listed.prompts.map((p) => p.id)).toEqual([a.promptId]);
    const setup = await callUnary(
      target(rpcUrl),
      IdentityService,
      IdentityService.method.verifySetup,
      {},
      {
        "x-api-key": a.apiKey,
      },
    );
    expect(setup.principal?.id).toBe(a.apiKeyId);
    // The key's organization only, and the service-only calls stay the services'.
    const other = callUnary(
      target(rpcUrl),
      CatalogService,
      CatalogService.method.listPrompts,
      { organizationId: b.organizationId },
      { authorization: `Bearer ${a.apiKey}` },
    );
    await expect(other).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    const serviceOnly = callUnary(
      target(rpcUrl),
      IdentityService,
      IdentityService.method.verifyApiKey,
      { key: a.apiKey },
      { "x-api-key": a.apiKey },
    );
    await expect(serviceOnly).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
  });

  it("runs a prompt for an API key over gRPC, a run the gateway then serves", async () => {
    const execution = createClient(
      ExecutionService,
      createGrpcTransport({ baseUrl: rpcUrl, sessionManager: sessions }),
    );
    const { run } = await execution.runPrompt(
      { organizationId: a.organizationId, promptId: a.promptId },
      { headers: { "x-api-key": a.apiKey } },
    );
    expect(run?.status).toBe("succeeded");
    const stored = await createTestClient(kiln.gateway.app).get<{ id: string; status: string }>(
      `/api/runs/${run?.id}`,
      { token: a.token },
    );
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ id: run?.id, status: "succeeded" });
  });

  it("refuses a call without a credential, with a token of another secret, and with a user's access token", async () => {
    const forged = await internalTokenCommand(["--service", "billing", "--organization", a.organizationId], {
      INTERNAL_AUTH_SECRET: randomBytes(32).toString("base64url"),
    });
    const credentials: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${forged}` },
      { authorization: `Bearer ${a.token}` },
    ];
    for (const metadata of credentials) {
      const call = callUnary(
        target(rpcUrl),
        CatalogService,
        CatalogService.method.listPrompts,
        { organizationId: a.organizationId },
        metadata,
      );
      await expect(call).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    }
  });
});

describe("`kiln embedded` (the process `pnpm start` runs)", () => {
  it("prints its RPC port and serves every service there, with reflection and health", async () => {
    const started = await startKilnProcess(":memory:", { INTERNAL_AUTH_SECRET: SECRET });
    try {
      expect(started.rpc).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const url = started.rpc ?? "";
      expect((await listServices(url)).sort()).toEqual([...SERVICES].sort());
      expect(await readiness(url)).toBe(HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      started.child.kill("SIGTERM");
      expect(await started.exited).toBe(0);
    }
  });

  it("serves no RPC port with RPC_PORT=off", async () => {
    const started = await startKilnProcess(":memory:", { RPC_PORT: "off" });
    started.child.kill("SIGTERM");
    expect(await started.exited).toBe(0);
    expect(started.rpc).toBeUndefined();
  });
});
