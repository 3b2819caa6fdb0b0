/**
 * ImportOrganization over the embedded platform: the catalog's RPC, called as the gateway calls
 * it, imports an exported organization with its evaluation cases through the real evaluation
 * service; a dry run writes nothing; cases the evaluation service refuses undo the catalog's part.
 */
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { jsonText } from "@kiln/kit/json-text";
import { remoteErrorOf } from "@kiln/kit/rpc/errors";
import { createDirectTransport } from "@kiln/kit/rpc/transport";
import { CatalogService } from "@kiln/proto/catalog";
import { buildTestPlatform, type TestPlatform } from "@kiln/testing/platform";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

type Bundle = { skills: { evaluationCases: { assertions: unknown[] }[] }[] } & Record<string, unknown>;

let kiln: TestPlatform;
let api: TestClient;
let exported: Bundle;

const SCOPES = ["prompts:read", "prompts:write", "tools:read", "tools:write", "skills:read", "skills:write"];
const ALL = [...SCOPES, "agents:read", "agents:write", "evaluations:read", "evaluations:write"];

/** A new organization, its owner's token, and the catalog's client with a key of it. */
async function organization() {
  const token = (await api.signUp()).accessToken;
  const organizationId = (await api.onboard(token)).organization.id;
  const key = (await api.createApiKey(token, organizationId, ALL)).key;
  const withKey: Interceptor = (next) => async (req) => {
    req.header.set("authorization", `Bearer ${key}`);
    return next(req);
  };
  const catalog: Client<typeof CatalogService> = createClient(
    CatalogService,
    createDirectTransport(kiln.services.catalog, [withKey]),
  );
  return { token, organizationId, catalog };
}

/** What an organization holds: its skills and their evaluation cases. */
async function contents(token: string, organizationId: string) {
  const skills = await api.get<{ data: { id: string }[] }>("/api/skills", { token, query: { organizationId } });
  const cases = await Promise.all(
    skills.body.data.map(
      async (s) =>
        (
          await api.get<{ data: unknown[] }>(`/api/skills/${s.id}/evaluation-cases`, {
            token,
            query: { organizationId },
          })
        ).body.data.length,
    ),
  );
  return { skills: skills.body.data.length, cases: cases.reduce((a, b) => a + b, 0) };
}

beforeAll(async () => {
  kiln = await buildTestPlatform();
  api = createTestClient(kiln.gateway.app);
  const source = await organization();
  const skill = await api.createSkill(source.token, source.organizationId, { name: "Greeter" });
  await api.createEvaluationCases(source.token, source.organizationId, skill.id, [
    { name: "Ada", input: { name: "Ada" }, assertions: [{ type: "contains", value: "Ada" }] },
    { name: "Bob", input: { name: "Bob" } },
  ]);
  const r = await api.get<Bundle>(`/api/organizations/${source.organizationId}/export`, { token: source.token });
  expect(r.status, r.text).toBe(200);
  exported = r.body;
}, 60_000);

afterAll(() => kiln?.close());

describe("ImportOrganization", () => {
  it("imports the skill and its cases (the evaluation service's part), then commits", async () => {
    const target = await organization();
    const bundle = jsonText(exported);
    const dry = await target.catalog.importOrganization({
      organizationId: target.organizationId,
      dryRun: true,
      document: { case: "bundle", value: bundle },
    });
    expect(dry.summary).toMatchObject({ created: 3, updated: 0, skipped: 0, conflicts: 0 });
    expect(await contents(target.token, target.organizationId)).toEqual({ skills: 0, cases: 0 });
    const r = await target.catalog.importOrganization({
      organizationId: target.organizationId,
      dryRun: false,
      document: { case: "bundle", value: bundle },
    });
    expect(r.dryRun).toBe(false);
    expect(r.format).toBe("kiln.bundle/v1");
    expect(r.items.map((i) => [i.kind, i.outcome])).toEqual([
      ["skill", "created"],
      ["evaluation_case", "created"],
      ["evaluation_case", "created"],
    ]);
    expect(await contents(target.token, target.organizationId)).toEqual({ skills: 1, cases: 2 });
    const again = await target.catalog.importOrganization({
      organizationId: target.organizationId,
      dryRun: false,
      document: { case: "bundle", value: bundle },
    });
    expect(again.summary).toMatchObject({ created: 0, skipped: 3 });
  });

  it("undoes the catalog's part when the evaluation service refuses a case, and answers its refusal", async () => {
    const target = await organization();
    const bad = structuredClone(exported);
    const k = bad.skills[0]?.evaluationCases[0];
    if (k) k.assertions = [{ type: "regex", pattern: "(a+)+\\1" }];
    const err = await target.catalog
      .importOrganization({
        organizationId: target.organizationId,
        dryRun: false,
        document: { case: "bundle", value: jsonText(bad) },
      })
      .then(
        () => undefined,
        (e: unknown) => remoteErrorOf(e),
      );
    expect(err).toMatchObject({
      kind: "invalid_argument",
      details: [{ field: "skills[0].evaluationCases[0].assertions[0].pattern" }],
    });
    expect(await contents(target.token, target.organizationId)).toEqual({ skills: 0, cases: 0 });
  });
});
