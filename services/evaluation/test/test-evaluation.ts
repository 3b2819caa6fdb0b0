/**
 * Test wiring for the evaluation use cases and workers: a fake identity (two organizations, a few
 * principals), a fake catalog (skills with draft/published versions) and a fake execution service
 * (a skill run whose output a test decides), passed through the deps. Only tests import this file.
 */
import { create } from "@bufbuild/protobuf";
import type { ContextValues } from "@connectrpc/connect";
import type { AuthorizeInput, IdentityAuth } from "@kiln/kit/authorizer";
import type { Bus } from "@kiln/kit/bus";
import { createMemoryBus } from "@kiln/kit/bus/memory";
import { DomainError, notFound, permissionDenied, unauthenticated } from "@kiln/kit/errors";
import { type JsonText, jsonText } from "@kiln/kit/json-text";
import { createLogger } from "@kiln/kit/logger";
import { isOutside, kPrincipal, type Principal } from "@kiln/kit/principal";
import { createSecretBox, newSecretKey } from "@kiln/kit/secret-box";
import type { Store } from "@kiln/kit/store";
import { createMemoryStore } from "@kiln/kit/store/memory";
import { GetSkillResponseSchema } from "@kiln/proto/catalog";
import { CompleteResponseSchema, RunSkillResponseSchema } from "@kiln/proto/execution";
import { AuthorizeResponseSchema } from "@kiln/proto/identity";
import { type CatalogClient, createAccess } from "../src/access.js";
import { createCases } from "../src/cases.js";
import type { EvaluationDeps } from "../src/evaluation-deps.js";
import type { TargetReader } from "../src/review/auto-add-targets.js";
import type { RunReader } from "../src/review/item-content.js";
import type { PromptReader } from "../src/review/rendered-messages.js";
import { createRunCompletion } from "../src/run-completion.js";
import { createRuns } from "../src/runs.js";
import { ensureEvaluationIndexes, evaluationCollections } from "../src/store/evaluation-store.js";
import { createEvaluationWorkers, type ExecutionClient } from "../src/work/evaluation-workers.js";
import { EVALUATIONS_STREAM } from "../src/work/work-queue.js";

export const ORG_A = "org_a";
export const ORG_B = "org_b";
export const silentLogger = createLogger({ name: "test", level: "silent" });

export const principals = {
  userA: { type: "user", id: "usr_a" },
  userB: { type: "user", id: "usr_b" },
  keyA: { type: "api_key", id: "key_a", organizationId: ORG_A, scopes: ["evaluations:read", "evaluations:write"] },
  keyAReadOnly: { type: "api_key", id: "key_ro", organizationId: ORG_A, scopes: ["evaluations:read"] },
  keyASkillsOnly: { type: "api_key", id: "key_sk", organizationId: ORG_A, scopes: ["skills:read", "skills:write"] },
  keyB: { type: "api_key", id: "key_b", organizationId: ORG_B, scopes: ["evaluations:read", "evaluations:write"] },
} satisfies Record<string, Principal>;

const MEMBERS: Record<string, string[]> = { usr_a: [ORG_A], usr_b: [ORG_B] };

/** Decides as the identity service does (api.md "Organization scoping"). */
export function createFakeIdentityAuth(): IdentityAuth & { calls: { principal: Principal; input: AuthorizeInput }[] } {
  const calls: { principal: Principal; input: AuthorizeInput }[] = [];
  return {
    calls,
    async verifyApiKey() {
      throw unauthenticated("invalid API key");
    },
    async authorize(principal, input) {
      calls.push({ principal, input });
      if (![ORG_A, ORG_B].includes(input.organizationId)) throw notFound("organization");
      if (principal.type === "user" && !MEMBERS[principal.id]?.includes(input.organizationId))
        throw notFound("organization");
      if (principal.type === "service" && isOutside(principal, input.organizationId))
        throw permissionDenied("service token of another organization");
      if (principal.type === "api_key") {
        if (principal.organizationId !== input.organizationId) throw permissionDenied("key of another organization");
        if (input.scope && !principal.scopes.includes(input.scope))
          throw permissionDenied(`lacks the scope ${input.scope}`);
      }
      return create(AuthorizeResponseSchema, {
        organization: { id: input.organizationId, name: input.organizationId },
      });
    },
  };
}

export interface FakeVersion {
  id: string;
  inputSchema: unknown;
  outputSchema: unknown;
}

export interface FakeSkill {
  id: string;
  organizationId: string;
  draft?: FakeVersion;
  published?: FakeVersion;
  /** Labels other than production → version id (one of the two above). */
  labels?: Record<string, string>;
}

type CallOptionsLike = { contextValues?: ContextValues };

/**
 * Refuses as the real services do a call made for a principal that cannot act in `organizationId`
 * (the forward interceptor signs the call's principal, else the platform principal, which acts
 * in no organization): not found, as for a resource of another organization.
 */
function checkActsIn(options: CallOptionsLike | undefined, organizationId: string, what: string): void {
  const principal = options?.contextValues?.get(kPrincipal) ?? { type: "service", id: "evaluation" };
  const member = principal.type === "user" && MEMBERS[principal.id]?.includes(organizationId);
  if (principal.type === "user" ? !member : isOutside(principal, organizationId)) throw notFound(what);
}

/** The catalog's GetSkill over a map of skills; records each call. */
export function createFakeCatalog(
  skills: FakeSkill[],
): CatalogClient &
  PromptReader &
  TargetReader & { skills: Map<string, FakeSkill>; calls: number; imports: Map<string, string> } {
  const byId = new Map(skills.map((s) => [s.id, s]));
  const fake = {
    skills: byId,
    calls: 0,
    async getSkill(req: { id: string; versionId?: string }, options?: CallOptionsLike) {
      fake.calls++;
      const skill = byId.get(req.id);
      if (!skill) throw notFound("skill");
      checkActsIn(options, skill.organizationId, "skill");
      const versions = [skill.draft, skill.published].filter((v): v is FakeVersion => v !== undefined);
      const described = req.versionId ? versions.find((v) => v.id === req.versionId) : versions[0];
      if (!described) throw notFound("skill version");
      return create(GetSkillResponseSchema, {
        skill: {
          id: skill.id,
          organizationId: skill.organizationId,
          draftVersionId: skill.draft?.id,
          publishedVersionId: skill.published?.id,
          describedVersionId: described.id,
          content: {
            inputSchema: { json: JSON.stringify(described.inputSchema) },
            outputSchema: { json: JSON.stringify(described.outputSchema) },
          },
        },
      });
    },
  };
  const withLabels = Object.assign(fake, {
    /** Import statuses the fake catalog answers (catalog GetImport); "unknown" for any other. */
    imports: new Map<string, string>(),
    async getImport(req: { organizationId: string; importId: string }, options?: CallOptionsLike) {
      fake.calls++;
      checkActsIn(options, req.organizationId, "organization");
      return { status: withLabels.imports.get(req.importId) ?? "unknown" };
    },
    async listLabels(req: { kind: string; parentId: string }, options?: CallOptionsLike) {
      fake.calls++;
      const skill = byId.get(req.parentId);
      if (!skill) throw notFound("skill");
      checkActsIn(options, skill.organizationId, "skill");
      const labels = Object.entries({
        ...(skill.published ? { production: skill.published.id } : {}),
        ...skill.labels,
      }).map(([label, versionId]) => ({ label, versionId }));
      return { labels };
    },
    /** No prompts here: every prompt version is not found. */
    async getPrompt(): Promise<never> {
      throw notFound("prompt");
    },
    /** No agents here either. */
    async getAgent(): Promise<never> {
      throw notFound("agent");
    },
  });
  return withLabels as unknown as CatalogClient &
    PromptReader &
    TargetReader & {
      skills: Map<string, FakeSkill>;
      calls: number;
      imports: Map<string, string>;
    };
}

export interface SkillRunCall {
  organizationId: string;
  skillId: string;
  inputJson: string;
  versionId: string;
  idempotencyKey: string | undefined;
}

/** What the fake skill run gives: an output, or a failed run, for one input on one version. */
export type RunBehaviour = (
  input: Record<string, unknown>,
  versionId: string,
) => { text: string; json?: unknown } | { failed: { code: string; message: string } };

/**
 * The execution service's RunSkill and Complete. Like the real one behind its idempotency
 * interceptor, a second call with the same key replays the first run.
 */
export function createFakeExecution(behaviour: RunBehaviour, options: { judgeScore?: number } = {}) {
  const calls: SkillRunCall[] = [];
  const replies = new Map<string, ReturnType<typeof create<typeof RunSkillResponseSchema>>>();
  let runs = 0;
  const fake = {
    calls,
    /** Called before each run; throwing makes RunSkill reject (an outage, say). */
    beforeRun: undefined as undefined | ((call: SkillRunCall) => void),
    async runSkill(
      req: { organizationId: string; skillId: string; input?: JsonText; versionId: string },
      opts?: { headers?: Record<string, string> } & CallOptionsLike,
    ) {
      checkActsIn(opts, req.organizationId, "skill");
      const call = {
        organizationId: req.organizationId,
        skillId: req.skillId,
        inputJson: req.input?.json ?? "",
        versionId: req.versionId,
        idempotencyKey: opts?.headers?.["idempotency-key"],
      };
      calls.push(call);
      fake.beforeRun?.(call);
      const replay = call.idempotencyKey ? replies.get(call.idempotencyKey) : undefined;
      if (replay) return replay;
      const result = behaviour(JSON.parse(call.inputJson), req.versionId);
      const id = `srun_${(++runs).toString(16).padStart(32, "0")}`;
      const reply = create(RunSkillResponseSchema, {
        run:
          "failed" in result
            ? { id, kind: "skill", status: "failed", latencyMs: 5n, estimatedCostUsd: 0, error: result.failed }
            : {
                id,
                kind: "skill",
                status: "succeeded",
                output: jsonText(result),
                latencyMs: 10n,
                estimatedCostUsd: 0.001,
                skillVersionId: req.versionId,
              },
      });
      if (call.idempotencyKey) replies.set(call.idempotencyKey, reply);
      return reply;
    },
    /** No stored runs: every run is not found. */
    async getRun(): Promise<never> {
      throw notFound("run");
    },
    async complete(req: { organizationId: string }, opts?: CallOptionsLike) {
      checkActsIn(opts, req.organizationId, "organization");
      return create(CompleteResponseSchema, {
        text: "",
        structured: jsonText({ score: options.judgeScore ?? 1, reason: "fake judge" }),
        provider: "local",
        model: "local/echo",
      });
    },
  };
  return fake as typeof fake & ExecutionClient & RunReader;
}

export const TEXT_SCHEMA = { type: "string" };
export const CITY_INPUT = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

/** A skill of ORG_A with a draft and a published version, both text skills. */
export const skillWithBoth = (id = "skl_both"): FakeSkill => ({
  id,
  organizationId: ORG_A,
  draft: { id: `sv_${id}_draft`, inputSchema: CITY_INPUT, outputSchema: TEXT_SCHEMA },
  published: { id: `sv_${id}_pub`, inputSchema: CITY_INPUT, outputSchema: TEXT_SCHEMA },
});

export async function createTestEvaluation(
  options: { store?: Store; bus?: Bus; skills?: FakeSkill[]; behaviour?: RunBehaviour } = {},
) {
  const store = options.store ?? createMemoryStore();
  const bus = options.bus ?? createMemoryBus();
  await ensureEvaluationIndexes(store);
  await bus.ensureStream(EVALUATIONS_STREAM);
  const identityAuth = createFakeIdentityAuth();
  const catalog = createFakeCatalog(options.skills ?? [skillWithBoth()]);
  const execution = createFakeExecution(options.behaviour ?? ((input) => ({ text: `hello ${String(input.city)}` })));
  const collections = evaluationCollections(store);
  const deps: EvaluationDeps = {
    collections,
    access: createAccess(identityAuth, catalog),
    completion: createRunCompletion(collections),
    bus,
    logger: silentLogger,
    now: () => new Date(),
  };
  return {
    store,
    bus,
    identityAuth,
    catalog,
    execution,
    collections,
    cases: createCases(deps),
    runs: createRuns(deps),
    workers: (overrides: Partial<Parameters<typeof createEvaluationWorkers>[0]> = {}) =>
      createEvaluationWorkers({
        bus,
        store,
        execution,
        logger: silentLogger,
        concurrency: 2,
        ackWaitMs: 2_000,
        retryDelayMs: 20,
        webhooks: { secrets: createSecretBox({ current: newSecretKey(), previous: [] }) },
        ...overrides,
      }),
  };
}

/** Resolves when `check` holds, polling; rejects after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The domain error `p` rejects with; throws when it resolves or rejects with anything else. */
export async function rejectionOf(p: Promise<unknown>): Promise<DomainError> {
  const outcome = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (outcome === undefined) throw new Error("expected the call to fail");
  if (!(outcome instanceof DomainError)) throw outcome;
  return outcome;
}
