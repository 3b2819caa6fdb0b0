import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createInternalTokens } from "@kiln/kit/auth";
import { createLogger } from "@kiln/kit/logger";
import { type Principal, serviceFor } from "@kiln/kit/principal";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { buildRpcServer, type RpcServer } from "@kiln/kit/rpc/server";
import { createNetworkTransport, type NetworkTransport } from "@kiln/kit/rpc/transport";
import { CatalogService } from "@kiln/proto/catalog";
import { EvaluationService } from "@kiln/proto/evaluation";
import { ExecutionService } from "@kiln/proto/execution";
import { IdentityService } from "@kiln/proto/identity";
import { WebhookService } from "@kiln/proto/webhooks";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IN_MEMORY, openEmbeddedData } from "./data-dir.js";
import { buildEmbedded } from "./embedded.js";

/**
 * Service principals act for one organization (docs/security.md "Service principals"): a service
 * token minted for organization A, sent by a real Connect client over HTTP/2 to each service's own
 * network server, reads and writes in A and nothing in B: a resource of B addressed by id is
 * not_found, a list or create naming B is permission_denied (as for an API key of another
 * organization, api.md "Organization scoping"), and nothing of B changes.
 */

type Embedded = Awaited<ReturnType<typeof buildEmbedded>>;

interface Tenant {
  token: string;
  organizationId: string;
  promptId: string;
  skillId: string;
  runId: string;
}

let kiln: Embedded;
let api: TestClient;
let secret: string;
const servers: RpcServer[] = [];
const transports: NetworkTransport[] = [];
const urls: Record<"identity" | "catalog" | "execution" | "evaluation", string> = {
  identity: "",
  catalog: "",
  execution: "",
  evaluation: "",
};
let a: Tenant;
let b: Tenant;

async function tenant(): Promise<Tenant> {
  const user = await api.signUp();
  const organizationId = (await api.onboard(user.accessToken)).organization.id;
  const { prompt } = await api.createPublishedPrompt(user.accessToken, organizationId, { systemPrompt: "hello" });
  const skill = await api.createSkill(user.accessToken, organizationId, { name: "S" });
  const run = await api.post<{ id: string }>(
    `/api/prompts/${prompt.id}/run`,
    { organizationId, variables: {} },
    { token: user.accessToken },
  );
  if (run.status !== 201) throw new Error(`run: ${run.status} ${run.text}`);
  return { token: user.accessToken, organizationId, promptId: prompt.id, skillId: skill.id, runId: run.body.id };
}

/** Clients of the four services whose calls carry an internal token for `principal`. */
function clientsAs(principal: Principal) {
  const connect = (baseUrl: string) => {
    const t = createNetworkTransport({
      baseUrl,
      interceptors: [createForwardInterceptor(createInternalTokens(secret), principal)],
    });
    transports.push(t);
    return t.transport;
  };
  const evaluation = connect(urls.evaluation);
  return {
    identity: createClient(IdentityService, connect(urls.identity)),
    catalog: createClient(CatalogService, connect(urls.catalog)),
    execution: createClient(ExecutionService, connect(urls.execution)),
    evaluation: createClient(EvaluationService, evaluation),
    webhooks: createClient(WebhookService, evaluation),
  };
}

async function codeOf(call: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await call;
    return "ok";
  } catch (e) {
    if (e instanceof ConnectError) return e.code;
    throw e;
  }
}

beforeAll(async () => {
  const data = await openEmbeddedData(IN_MEMORY);
  secret = data.internalSecret;
  kiln = await buildEmbedded({ logger: createLogger({ name: "test", level: "silent" }), data });
  api = createTestClient(kiln.gateway.app);
  for (const name of ["identity", "catalog", "execution", "evaluation"] as const) {
    const server = await buildRpcServer(kiln.services[name]);
    servers.push(server);
    const address = await server.app.listen({ host: "127.0.0.1", port: 0 });
    urls[name] = address;
  }
  a = await tenant();
  b = await tenant();
});

afterAll(async () => {
  for (const t of transports) t.close();
  for (const s of servers) await s.app.close();
  await kiln?.close();
});

describe("a service token minted for one organization", () => {
  it("reads and writes in its organization", async () => {
    const asA = clientsAs(serviceFor("billing", a.organizationId));
    expect((await asA.catalog.getPrompt({ id: a.promptId })).prompt?.id).toBe(a.promptId);
    expect((await asA.catalog.listPrompts({ organizationId: a.organizationId })).prompts.length).toBeGreaterThan(0);
    const created = await asA.catalog.createPrompt({ organizationId: a.organizationId, name: "by billing" });
    expect(created.prompt?.organizationId).toBe(a.organizationId);
    expect((await asA.execution.getRun({ id: a.runId })).run?.id).toBe(a.runId);
    expect((await asA.execution.listRuns({ organizationId: a.organizationId })).runs.length).toBeGreaterThan(0);
    const run = await asA.execution.runPrompt({ organizationId: a.organizationId, promptId: a.promptId });
    expect(run.run?.status).toBe("succeeded");
    await asA.evaluation.listEvaluationCases({ organizationId: a.organizationId, skillId: a.skillId });
    await asA.webhooks.listWebhooks({ organizationId: a.organizationId });
    expect((await asA.identity.getOrganization({ organizationId: a.organizationId })).organization?.id).toBe(
      a.organizationId,
    );
  });

  it("reads nothing in another organization: its resources are not found, its lists refused", async () => {
    const asA = clientsAs(serviceFor("billing", a.organizationId));
    // Each call made when its turn comes: a refusal made early and awaited late is an unhandled rejection.
    const refusals: [string, () => Promise<unknown>, Code][] = [
      ["GetPrompt of B", () => asA.catalog.getPrompt({ id: b.promptId }), Code.NotFound],
      ["GetSkill of B", () => asA.catalog.getSkill({ id: b.skillId }), Code.NotFound],
      ["ListPrompts of B", () => asA.catalog.listPrompts({ organizationId: b.organizationId }), Code.PermissionDenied],
      [
        "ResolvePromptVersion of B",
        () => asA.catalog.resolvePromptVersion({ organizationId: b.organizationId, promptId: b.promptId }),
        Code.NotFound,
      ],
      ["GetRun of B", () => asA.execution.getRun({ id: b.runId }), Code.NotFound],
      ["ListRuns of B", () => asA.execution.listRuns({ organizationId: b.organizationId }), Code.PermissionDenied],
      [
        "ListEvaluationCases of B's skill",
        () => asA.evaluation.listEvaluationCases({ organizationId: b.organizationId, skillId: b.skillId }),
        Code.NotFound,
      ],
      [
        "ListEvaluationCases of B's skill, no organization named",
        () => asA.evaluation.listEvaluationCases({ skillId: b.skillId }),
        Code.NotFound,
      ],
      ["ListWebhooks of B", () => asA.webhooks.listWebhooks({ organizationId: b.organizationId }), Code.NotFound],
      ["GetOrganization B", () => asA.identity.getOrganization({ organizationId: b.organizationId }), Code.NotFound],
    ];
    for (const [what, call, code] of refusals) expect([what, await codeOf(call())]).toEqual([what, code]);
  });

  it("writes nothing in another organization", async () => {
    const asA = clientsAs(serviceFor("billing", a.organizationId));
    const before = await api.get<{ data: unknown[] }>("/api/prompts", {
      token: b.token,
      query: { organizationId: b.organizationId },
    });
    const runsBefore = await api.get<{ data: unknown[] }>("/api/runs", {
      token: b.token,
      query: { organizationId: b.organizationId },
    });
    // Each call made when its turn comes: a refusal made early and awaited late is an unhandled rejection.
    const refusals: [string, () => Promise<unknown>, Code][] = [
      [
        "CreatePrompt in B",
        () => asA.catalog.createPrompt({ organizationId: b.organizationId, name: "x" }),
        Code.PermissionDenied,
      ],
      ["UpdatePrompt of B", () => asA.catalog.updatePrompt({ id: b.promptId, name: "taken" }), Code.NotFound],
      [
        "CreatePromptVersion of B",
        () => asA.catalog.createPromptVersion({ promptId: b.promptId, content: { systemPrompt: "x" } }),
        Code.NotFound,
      ],
      [
        "RunPrompt in B",
        () => asA.execution.runPrompt({ organizationId: b.organizationId, promptId: b.promptId }),
        Code.PermissionDenied,
      ],
      [
        "Complete in B",
        () => asA.execution.complete({ organizationId: b.organizationId, user: "hi" }),
        Code.PermissionDenied,
      ],
      [
        "CreateWebhook in B",
        () =>
          asA.webhooks.createWebhook({
            organizationId: b.organizationId,
            url: "https://hooks.example.com/x",
            events: ["run.completed"],
          }),
        Code.NotFound,
      ],
    ];
    for (const [what, call, code] of refusals) expect([what, await codeOf(call())]).toEqual([what, code]);
    const after = await api.get("/api/prompts", { token: b.token, query: { organizationId: b.organizationId } });
    expect(after.body).toEqual(before.body);
    const runsAfter = await api.get("/api/runs", { token: b.token, query: { organizationId: b.organizationId } });
    expect(runsAfter.body).toEqual(runsBefore.body);
  });

  it("makes none of identity's platform calls, which only the platform principal makes", async () => {
    const asA = clientsAs(serviceFor("billing", a.organizationId));
    expect(await codeOf(asA.identity.verifyApiKey({ key: "sk_x" }))).toBe(Code.PermissionDenied);
    expect(await codeOf(asA.identity.getJwks({}))).toBe(Code.PermissionDenied);
    const platform = clientsAs({ type: "service", id: "gateway" });
    expect(await codeOf(platform.identity.getJwks({}))).toBe("ok");
  });
});

describe("the platform principal (a service token naming no organization)", () => {
  it("acts in no organization", async () => {
    const platform = clientsAs({ type: "service", id: "billing" });
    expect(await codeOf(platform.catalog.getPrompt({ id: a.promptId }))).toBe(Code.NotFound);
    expect(await codeOf(platform.catalog.listPrompts({ organizationId: a.organizationId }))).toBe(
      Code.PermissionDenied,
    );
    expect(await codeOf(platform.execution.getRun({ id: a.runId }))).toBe(Code.NotFound);
    expect(await codeOf(platform.execution.runPrompt({ organizationId: a.organizationId, promptId: a.promptId }))).toBe(
      Code.PermissionDenied,
    );
  });
});
