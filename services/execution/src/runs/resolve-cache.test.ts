/**
 * The execution service's resolve cache against the in-process bus's change counter: an answer is
 * reused only while the counter stands still, a hit is authorized like the catalog's resolve, and
 * without a counter (the bus down) every run asks the catalog.
 */
import { type CallOptions, type Client, createContextValues } from "@connectrpc/connect";
import type { AuthorizeInput, IdentityAuth } from "@kiln/kit/authorizer";
import { CATALOG_GENERATION, createGeneration } from "@kiln/kit/bus/generation";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { DomainError, notFound } from "@kiln/kit/errors";
import { createLogger } from "@kiln/kit/logger";
import { kPrincipal, type Principal } from "@kiln/kit/principal";
import type { CatalogService } from "@kiln/proto/catalog";
import { describe, expect, it } from "vitest";
import { approximateBytes, kGenerationRead, readGenerationEarly, withResolveCache } from "./resolve-cache.js";

const logger = createLogger({ name: "test", level: "silent" });
const RUN = "/kiln.execution.v1.ExecutionService/RunPrompt";
const member: Principal = { type: "user", id: "usr_1" };
const outsider: Principal = { type: "user", id: "usr_2" };
const otherOrgKey: Principal = { type: "api_key", id: "key_9", organizationId: "org_2", scopes: ["runs:write"] };

async function setUp() {
  const bus = createMemoryBus();
  await bus.ensureStream(CATALOG_GENERATION);
  const generation = createGeneration(bus, logger);
  const calls: string[] = [];
  let live = "pv_1";
  // As a catalog replica answers: current at the counter asked for, unless it is one of before min_generation.
  const state = { honoursMin: true, minAsked: [] as bigint[] };
  const at = (min?: bigint) => {
    state.minAsked.push(min ?? 0n);
    return state.honoursMin ? (min ?? 0n) : 0n;
  };
  const catalog = {
    async resolvePromptVersion(req: { promptId?: string; versionId?: string; minGeneration?: bigint }) {
      calls.push(`prompt ${req.promptId}`);
      return { prompt: { version: { id: req.versionId || live } }, generation: at(req.minGeneration) };
    },
    async resolveSkillVersion(req: { skillId?: string; minGeneration?: bigint }) {
      calls.push(`skill ${req.skillId}`);
      return { version: { id: "sv_1" }, steps: [], tools: [], generation: at(req.minGeneration) };
    },
  } as unknown as Client<typeof CatalogService>;
  const decided: AuthorizeInput[] = [];
  const identityAuth: IdentityAuth = {
    verifyApiKey: async () => member,
    async authorize(principal, input) {
      decided.push(input);
      if (principal.type === "user" && principal.id !== member.id) throw notFound("organization");
      return { organizationId: input.organizationId } as never;
    },
  };
  const cached = withResolveCache({ catalog, generation, identityAuth });
  const as = (principal?: Principal): CallOptions => ({
    contextValues: principal ? createContextValues().set(kPrincipal, principal) : undefined,
  });
  const run = async (principal: Principal | undefined, versionId = "") =>
    (await cached.resolvePromptVersion({ organizationId: "org_1", promptId: "prm_1", versionId }, as(principal))).prompt
      ?.version?.id;
  return {
    bus,
    state,
    generation,
    calls,
    decided,
    run,
    cached,
    as,
    publish: async (id: string) => {
      live = id;
      await generation.bump();
    },
  };
}

describe("withResolveCache", () => {
  it("answers from the cache until the catalog's counter moves, then asks again", async () => {
    const t = await setUp();
    expect(await t.run(member)).toBe("pv_1");
    expect(await t.run(member)).toBe("pv_1");
    expect(await t.run(member, "pv_0")).toBe("pv_0");
    expect(t.calls).toEqual(["prompt prm_1", "prompt prm_1"]);
    // A hit is authorized as the catalog would: runs:write on the organization, AI required.
    expect(t.decided).toEqual([{ organizationId: "org_1", requireAi: true, scope: "runs:write" }]);
    await t.publish("pv_2");
    expect(await t.run(member)).toBe("pv_2");
    expect(await t.run(member)).toBe("pv_2");
    expect(t.calls).toHaveLength(3);
    // Skills are cached the same way.
    const options = t.as(member);
    await t.cached.resolveSkillVersion({ organizationId: "org_1", skillId: "skl_1", preferDraft: false }, options);
    await t.cached.resolveSkillVersion({ organizationId: "org_1", skillId: "skl_1", preferDraft: false }, options);
    await t.cached.resolveSkillVersion({ organizationId: "org_1", skillId: "skl_1", preferDraft: true }, options);
    expect(t.calls.filter((c) => c.startsWith("skill"))).toHaveLength(2);
  });

  it("asks the catalog for an answer current at the counter it read, and keeps only such an answer", async () => {
    const t = await setUp();
    const counter = await t.generation.current();
    await t.run(member);
    await t.run(member);
    expect(t.state.minAsked).toEqual([BigInt(counter)]);
    // A catalog replica that does not say it read at the counter (a stale one): its answer is not kept.
    await t.publish("pv_2");
    t.state.honoursMin = false;
    await t.run(member);
    await t.run(member);
    expect(t.state.minAsked).toEqual([BigInt(counter), BigInt(counter + 1), BigInt(counter + 1)]);
  });

  it("refuses a hit to a caller the catalog would refuse, as not found", async () => {
    const t = await setUp();
    await t.run(member);
    for (const principal of [outsider, otherOrgKey]) {
      const e = await t.run(principal).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).kind).toBe("not_found");
      expect((e as DomainError).message).toMatch(/prompt/);
    }
    expect(t.calls).toHaveLength(1);
  });

  it("asks the catalog every time when the counter cannot be read, or the call carries no principal", async () => {
    const t = await setUp();
    await t.run(undefined);
    await t.run(undefined);
    expect(t.calls).toHaveLength(2);
    await t.run(member);
    await t.bus.close();
    await t.run(member);
    await t.run(member);
    expect(t.calls).toHaveLength(5);
  });

  it("uses the counter read as the call arrived when the call carries one, and never reads it again", async () => {
    const t = await setUp();
    let reads = 0;
    const counting = {
      ...t.generation,
      current: () => {
        reads++;
        return t.generation.current();
      },
    };
    const early = readGenerationEarly(counting, new Set([RUN]));
    // Other methods start no read.
    expect(early("/kiln.execution.v1.ExecutionService/ListRuns").get(kGenerationRead)).toBeUndefined();
    expect(reads).toBe(0);
    const arrived = early(RUN);
    expect(reads).toBe(1);
    const asArrived = (principal: Principal): CallOptions => ({
      contextValues: createContextValues()
        .set(kPrincipal, principal)
        .set(kGenerationRead, arrived.get(kGenerationRead)),
    });
    const run = async () =>
      (
        await t.cached.resolvePromptVersion(
          { organizationId: "org_1", promptId: "prm_1", versionId: "" },
          asArrived(member),
        )
      ).prompt?.version?.id;
    expect(await run()).toBe("pv_1");
    expect(await run()).toBe("pv_1");
    expect(t.calls).toEqual(["prompt prm_1"]);
    // A publish after the call arrived is a later write: this call may run what was live when it arrived.
    await t.publish("pv_2");
    expect(await run()).toBe("pv_1");
    // A call arriving after the publish reads the moved counter and gets the new version.
    expect(await t.run(member)).toBe("pv_2");
  });

  it("asks the catalog when the counter read as the call arrived failed, and a read nobody awaits fails quietly", async () => {
    const t = await setUp();
    const failing = { ...t.generation, current: () => Promise.reject(new Error("bus down")) };
    // Never awaited: an unhandled rejection would fail this test run.
    readGenerationEarly(failing, new Set([RUN]))(RUN);
    const read = readGenerationEarly(failing, new Set([RUN]))(RUN).get(kGenerationRead);
    const options: CallOptions = {
      contextValues: createContextValues().set(kPrincipal, member).set(kGenerationRead, read),
    };
    await t.cached.resolvePromptVersion({ organizationId: "org_1", promptId: "prm_1", versionId: "" }, options);
    await t.cached.resolvePromptVersion({ organizationId: "org_1", promptId: "prm_1", versionId: "" }, options);
    expect(t.calls).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 10));
  });

  it("makes one catalog call for concurrent misses of the same version", async () => {
    const t = await setUp();
    const ids = await Promise.all(Array.from({ length: 20 }, () => t.run(member)));
    expect(new Set(ids)).toEqual(new Set(["pv_1"]));
    expect(t.calls).toHaveLength(1);
  });

  it("keeps answers within a byte budget: a large prompt pushes the oldest out", async () => {
    const bus = createMemoryBus();
    await bus.ensureStream(CATALOG_GENERATION);
    let calls = 0;
    const big = "x".repeat(40_000);
    const catalog = {
      async resolvePromptVersion(req: { promptId?: string }) {
        calls++;
        return { prompt: { version: { id: req.promptId, systemPrompt: big } } };
      },
    } as unknown as Client<typeof CatalogService>;
    const identityAuth: IdentityAuth = {
      verifyApiKey: async () => member,
      authorize: async (_p, input) => ({ organizationId: input.organizationId }) as never,
    };
    // Room for two such answers (80 KB each), not three.
    const cached = withResolveCache({
      catalog,
      generation: createGeneration(bus, logger),
      identityAuth,
      maxBytes: 200_000,
    });
    const options: CallOptions = { contextValues: createContextValues().set(kPrincipal, member) };
    const run = (promptId: string) => cached.resolvePromptVersion({ organizationId: "org_1", promptId }, options);
    await run("prm_a");
    await run("prm_b");
    await run("prm_a");
    expect(calls).toBe(2);
    await run("prm_c");
    // prm_b was the least recently used: it went.
    await run("prm_a");
    await run("prm_b");
    expect(calls).toBe(4);
    expect(approximateBytes({ s: big })).toBeGreaterThan(80_000);
  });
});
