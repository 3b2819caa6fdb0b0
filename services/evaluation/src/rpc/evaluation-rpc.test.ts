import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createContextValues } from "@connectrpc/connect";
import { createInternalTokens } from "@kiln/kit/auth";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { notFound } from "@kiln/kit/errors";
import { jsonTextOf } from "@kiln/kit/json-text";
import { kPrincipal, type Principal } from "@kiln/kit/principal";
import { createForwardInterceptor } from "@kiln/kit/rpc/auth-interceptor";
import { createInProcessTransport } from "@kiln/kit/rpc/transport";
import { createSecretBox, newSecretKey } from "@kiln/kit/secret-box";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { ContractValiditySchema, EvaluationRunSchema, EvaluationService } from "@kiln/proto/evaluation";
import { afterAll, describe, expect, it } from "vitest";
import {
  createFakeCatalog,
  createFakeExecution,
  createFakeIdentityAuth,
  eventually,
  principals,
  silentLogger,
  skillWithBoth,
} from "../../test/test-evaluation.js";
import { createEvaluationService } from "../service.js";

const tokens = createInternalTokens("x".repeat(32));
const bus = createMemoryBus();
const service = await createEvaluationService({
  logger: silentLogger,
  store: createMemoryStore(),
  bus,
  tokens,
  identityAuth: createFakeIdentityAuth(),
  catalog: createFakeCatalog([skillWithBoth()]),
  execution: createFakeExecution((input) => ({ text: `hello ${String(input.city)}` })),
  traces: { getTrace: () => Promise.reject(notFound("trace")) },
  workers: { concurrency: 2, ackWaitMs: 5_000 },
  webhooks: { secrets: createSecretBox({ current: newSecretKey(), previous: [] }) },
});
const client = createClient(
  EvaluationService,
  createInProcessTransport(service, [createForwardInterceptor(tokens, { type: "service", id: "test" })]),
);
const as = (principal: Principal) => ({ contextValues: createContextValues().set(kPrincipal, principal) });

afterAll(async () => {
  await service.close();
  await bus.close();
});

describe("EvaluationService over Connect", () => {
  it("creates cases, starts a run and reads it back completed", async () => {
    const { cases } = await client.createEvaluationCases(
      {
        skillId: "skl_both",
        cases: [{ name: "oslo", input: jsonTextOf('{"city":"Oslo"}'), expectedOutput: jsonTextOf('"hello Oslo"') }],
      },
      as(principals.keyA),
    );
    expect(cases[0]).toMatchObject({
      organizationId: "org_a",
      content: { name: "oslo", expectedOutput: { json: '"hello Oslo"' }, assertions: [] },
    });
    const listed = await client.listEvaluationCases({ skillId: "skl_both" }, as(principals.keyAReadOnly));
    expect(listed.cases.map((c) => c.id)).toEqual([cases[0]?.id]);

    const { run } = await client.startEvaluationRun({ skillId: "skl_both" }, as(principals.keyA));
    expect(run).toMatchObject({ status: "queued", results: [] });
    expect(run?.summary).toBeUndefined();
    expect(run?.contractValidity).toBeUndefined();
    expect(run?.targets.map((t) => t.label)).toEqual(["draft", "published"]);
    const done = await eventually(async () => {
      const got = await client.getEvaluationRun(
        { skillId: "skl_both", evaluationRunId: run?.id ?? "" },
        as(principals.userA),
      );
      return got.run?.status === "completed" && got.run;
    });
    expect(done.completedAt).toBeDefined();
    const { results } = toJson(EvaluationRunSchema, done) as { results?: unknown };
    expect(results).toEqual([
      {
        caseId: cases[0]?.id,
        byTarget: {
          draft: expect.objectContaining({
            outcome: "pass",
            assertions: [expect.objectContaining({ type: "equals", passed: true })],
          }),
          published: expect.objectContaining({ outcome: "pass" }),
        },
        change: "unchanged",
      },
    ]);
    expect(done.summary?.text).toBe(
      "1 case: draft 1/1 passed, published 1/1 passed; 0 fixed, 0 regressed, 0 output changed, 1 unchanged.",
    );
    const validity =
      done.contractValidity && toJson(ContractValiditySchema, done.contractValidity, { alwaysEmitImplicit: true });
    expect(validity).toEqual({ valid: true, violations: [], breakingChanges: [] });
  });

  it("maps a missing scope to PermissionDenied and a bad case to InvalidArgument", async () => {
    const denied = await client
      .startEvaluationRun({ skillId: "skl_both" }, as(principals.keyAReadOnly))
      .catch((e: unknown) => ConnectError.from(e));
    expect(denied).toBeInstanceOf(ConnectError);
    expect((denied as ConnectError).code).toBe(Code.PermissionDenied);
    const invalid = await client
      .createEvaluationCases({ skillId: "skl_both", cases: [{ input: jsonTextOf("1") }] }, as(principals.keyA))
      .catch((e: unknown) => ConnectError.from(e));
    expect((invalid as ConnectError).code).toBe(Code.InvalidArgument);
  });
});
