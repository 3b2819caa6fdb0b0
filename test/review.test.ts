/**
 * Human review (docs/review.md; issue #36) over real HTTP in both run modes (the distributed one
 * with two evaluation processes, so that claims race across processes): an annotation queue
 * with two reviewers (two members of one organization) drained concurrently, every item reviewed
 * by exactly one of them; many concurrent claims never lease one item twice; a lease that ends puts
 * the item back; reviews are checked against the queue's score set; an item becomes an evaluation
 * case of a skill, visible in the skill's cases; another organization sees nothing; bad input
 * changes nothing; an auto-add rule adds a sample of a prompt's runs; a trace item shows its model calls.
 */
import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded } from "@kiln/launcher/embedded";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { makeSpans } from "./support/genai-spans.js";
import { eventually } from "./support/identity-flow.js";
import { EXPORTERS, sendSpans } from "./support/trace-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field.
type Loose = any;

const LEASE_MS = 4_000;
const modes = [
  {
    name: "embedded mode",
    async start() {
      const kiln = await buildEmbedded({
        logger: createLogger({ name: "test", level: "silent" }),
        review: { leaseMs: LEASE_MS },
      });
      const base = await kiln.gateway.app.listen({ host: "127.0.0.1", port: 0 });
      return { base, stop: () => kiln.close() };
    },
  },
  {
    name: "distributed mode (FerretDB, NATS)",
    async start() {
      const kiln = await startDistributed({
        mongoUrl: inject("mongoUrl"),
        natsUrl: inject("natsUrl"),
        envOf: { evaluation: { REVIEW_LEASE_MS: String(LEASE_MS) } },
        // Two evaluation processes: claims race across processes on one store.
        replicasOf: { evaluation: [{}] },
      });
      return { base: kiln.gatewayUrl, stop: () => kiln.stop() };
    },
  },
];

const SCORES = [
  { name: "correct", kind: "boolean", required: true },
  { name: "quality", kind: "numeric", min: 1, max: 5, required: false },
  { name: "tone", kind: "categorical", options: ["friendly", "rude"], required: false },
];

describe.each(modes)("annotation queues in $name", (mode) => {
  let running: Awaited<ReturnType<(typeof modes)[number]["start"]>>;
  let api: TestClient;
  let owner: string;
  let ownerId: string;
  let member: string;
  let memberId: string;
  let outsider: string;
  let outsiderOrg: string;
  let organizationId: string;
  let promptId: string;
  let skillId: string;
  let apiKey: string;
  const runIds: string[] = [];

  const runPrompt = async (name: string, token = owner, org = organizationId, id = promptId) => {
    const r = await api.post<Loose>(`/api/prompts/${id}/run`, { organizationId: org, variables: { name } }, { token });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const newQueue = async (extra: Record<string, unknown> = {}) => {
    const r = await api.post<Loose>(
      "/api/annotation-queues",
      { organizationId, name: "Greetings", scoreConfigs: SCORES, ...extra },
      { token: owner },
    );
    expect(r.status, r.text).toBe(201);
    return r.body.id as string;
  };
  const add = (queueId: string, body: unknown, token = owner) =>
    api.post<Loose>(`/api/annotation-queues/${queueId}/items`, body, { token });
  const next = (queueId: string, token: string) =>
    api.post<Loose>(`/api/annotation-queues/${queueId}/next`, undefined, { token });
  const review = (queueId: string, itemId: string, body: unknown, token: string) =>
    api.post<Loose>(`/api/annotation-queues/${queueId}/items/${itemId}/review`, body, { token });
  const items = async (queueId: string, status = "") => {
    const r = await api.get<Loose>(
      `/api/annotation-queues/${queueId}/items?limit=200${status && `&status=${status}`}`,
      {
        token: owner,
      },
    );
    expect(r.status).toBe(200);
    return r.body.data as Loose[];
  };

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    const a = await api.signUp();
    owner = a.accessToken;
    ownerId = a.user.id;
    organizationId = (await api.onboard(owner)).organization.id;
    const m = await api.signUp();
    member = m.accessToken;
    memberId = m.user.id;
    const added = await api.post(
      `/api/organizations/${organizationId}/members`,
      { email: m.user.email, role: "member" },
      { token: owner },
    );
    expect(added.status).toBe(201);
    const o = await api.signUp();
    outsider = o.accessToken;
    outsiderOrg = (await api.onboard(outsider)).organization.id;
    apiKey = (await api.createApiKey(owner, organizationId, ["evaluations:read", "evaluations:write", "traces:write"]))
      .key;
    const variablesSchema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
    promptId = (
      await api.createPublishedPrompt(owner, organizationId, {
        systemPrompt: "Greet {{name}}",
        variablesSchema,
        model: "local/echo",
      })
    ).prompt.id;
    skillId = (await api.createSkill(owner, organizationId, { name: "Greeter" })).id;
    for (let i = 0; i < 12; i++) runIds.push(await runPrompt(`user ${i}`));
  }, 180_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("refuses a bad queue and bad items with the field named, and stores nothing", async () => {
    const bad = await api.post<Loose>(
      "/api/annotation-queues",
      { organizationId, name: "Bad", scoreConfigs: [{ name: "q", kind: "numeric", min: 5, max: 1, required: false }] },
      { token: owner },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "invalid_argument", details: [{ field: "scoreConfigs[0].max" }] });
    const listed = await api.get<Loose>(`/api/annotation-queues?organizationId=${organizationId}`, { token: owner });
    expect(listed.body.data.map((q: Loose) => q.name)).not.toContain("Bad");

    const queueId = await newQueue();
    const foreignRun = await (async () => {
      const p = await api.createPublishedPrompt(outsider, outsiderOrg, { systemPrompt: "Hi", model: "local/echo" });
      return runPrompt("x", outsider, outsiderOrg, p.prompt.id);
    })();
    const refused = await add(queueId, { runIds: [runIds[0], foreignRun, "run_nope"] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([
      { field: "runIds[1]", issue: `no run "${foreignRun}" in this organization` },
      { field: "runIds[2]", issue: 'no run "run_nope" in this organization' },
    ]);
    expect(await items(queueId)).toEqual([]);
    const empty = await add(queueId, {});
    expect(empty.status).toBe(400);
  });

  it("two reviewers drain a queue concurrently: every item reviewed once, by one of them", async () => {
    const queueId = await newQueue();
    const first = await add(queueId, { runIds: [...runIds, runIds[0]] });
    expect(first.status).toBe(201);
    expect(first.body.data).toHaveLength(12);
    const again = await add(queueId, { runIds: runIds.slice(0, 3) });
    expect(again.body).toEqual({ data: [], skipped: 3 });

    const reviewedBy = new Map<string, string[]>();
    const worker = async (token: string, who: string) => {
      for (;;) {
        const claim = await next(queueId, token);
        expect(claim.status).toBe(200);
        if (!claim.body.item) return;
        expect(claim.body.item).toMatchObject({ status: "in_review", assignee: who });
        expect(claim.body.content.run).toMatchObject({ kind: "prompt", model: "local/echo", status: "succeeded" });
        const name = claim.body.content.run.input.variables.name;
        expect(name).toMatch(/^user \d+$/);
        expect(claim.body.content.messages).toEqual([{ role: "system", content: `Greet ${name}`, step: null }]);
        const done = await review(queueId, claim.body.item.id, { scores: { correct: true, quality: 4 } }, token);
        // Two calls of one reviewer may both answer the item they hold: the second review is a 409.
        if (done.status === 409) continue;
        expect(done.status, done.text).toBe(200);
        reviewedBy.set(who, [...(reviewedBy.get(who) ?? []), claim.body.item.id]);
      }
    };
    await Promise.all([
      worker(owner, ownerId),
      worker(owner, ownerId),
      worker(member, memberId),
      worker(member, memberId),
    ]);
    const byOwner = reviewedBy.get(ownerId) ?? [];
    const byMember = reviewedBy.get(memberId) ?? [];
    expect(byOwner.filter((id) => byMember.includes(id))).toEqual([]);
    expect(new Set([...byOwner, ...byMember]).size).toBe(12);
    expect(byOwner.length + byMember.length).toBe(12);
    const completed = await items(queueId, "completed");
    expect(completed).toHaveLength(12);
    for (const item of completed) {
      const who = byOwner.includes(item.id) ? ownerId : memberId;
      expect(item.review).toMatchObject({ reviewerId: who, scores: { correct: true, quality: 4 } });
    }
    const queue = await api.get<Loose>(`/api/annotation-queues/${queueId}`, { token: member });
    expect(queue.body.progress).toMatchObject({ pending: 0, inReview: 0, completed: 12, skipped: 0 });
    const perReviewer = Object.fromEntries(
      queue.body.progress.reviewers.map((r: Loose) => [r.reviewerId, r.completed]),
    );
    expect(perReviewer).toEqual(
      Object.fromEntries(
        [
          [ownerId, byOwner.length],
          [memberId, byMember.length],
        ].filter(([, n]) => n !== 0),
      ),
    );
  }, 120_000);

  it("many claims at the same moment never lease one item to both reviewers", async () => {
    const queueId = await newQueue();
    await add(queueId, { runIds });
    const claims = await Promise.all(
      Array.from({ length: 16 }, (_, i) => next(queueId, i % 2 === 0 ? owner : member).then((r) => ({ i, r }))),
    );
    const held = (even: boolean) =>
      new Set(claims.filter((c) => (c.i % 2 === 0) === even && c.r.body.item).map((c) => c.r.body.item.id as string));
    const ownerHeld = held(true);
    const memberHeld = held(false);
    expect(ownerHeld.size).toBeGreaterThan(0);
    expect(memberHeld.size).toBeGreaterThan(0);
    expect([...ownerHeld].filter((id) => memberHeld.has(id))).toEqual([]);
    const inReview = await items(queueId, "in_review");
    for (const item of inReview) expect(item.assignee).toBe(ownerHeld.has(item.id) ? ownerId : memberId);
    expect(inReview).toHaveLength(ownerHeld.size + memberHeld.size);
  });

  it("checks reviews against the score set, holder only; skip, release and an ended lease", async () => {
    const queueId = await newQueue();
    await add(queueId, { runIds: runIds.slice(0, 2) });
    const mine = (await next(queueId, owner)).body.item;
    const before = await items(queueId);
    for (const [scores, field] of [
      [{ quality: 3 }, "scores.correct"],
      [{ correct: true, quality: 9 }, "scores.quality"],
      [{ correct: "yes" }, "scores.correct"],
      [{ correct: true, tone: "grumpy" }, "scores.tone"],
      [{ correct: true, extra: 1 }, "scores.extra"],
    ] as const) {
      const r = await review(queueId, mine.id, { scores }, owner);
      expect(r.status, JSON.stringify(scores)).toBe(400);
      expect(r.body.error.details.map((d: Loose) => d.field)).toContain(field);
    }
    expect(await items(queueId)).toEqual(before);
    const notHolder = await review(queueId, mine.id, { scores: { correct: true } }, member);
    expect(notHolder.status).toBe(409);
    const byKey = await api.post<Loose>(`/api/annotation-queues/${queueId}/next`, undefined, { apiKey });
    expect(byKey.status).toBe(403);

    const other = (await next(queueId, member)).body.item;
    expect(other.id).not.toBe(mine.id);
    expect((await next(queueId, member)).body.item.id).toBe(other.id);
    const skipped = await api.post<Loose>(`/api/annotation-queues/${queueId}/items/${other.id}/skip`, undefined, {
      token: member,
    });
    expect(skipped.body).toMatchObject({ status: "skipped", assignee: memberId });
    expect((await next(queueId, member)).body.item).toBeNull();
    const released = await api.post<Loose>(`/api/annotation-queues/${queueId}/items/${mine.id}/release`, undefined, {
      token: owner,
    });
    expect(released.body).toMatchObject({ status: "pending", assignee: null, leaseUntil: null });

    // The member takes it and goes quiet: once the lease ends, the owner gets it, and the member's review is refused.
    expect((await next(queueId, member)).body.item.id).toBe(mine.id);
    expect((await next(queueId, owner)).body.item).toBeNull();
    await new Promise((r) => setTimeout(r, LEASE_MS + 500));
    const progress = (await api.get<Loose>(`/api/annotation-queues/${queueId}`, { token: owner })).body.progress;
    expect(progress).toMatchObject({ pending: 1, inReview: 0, skipped: 1 });
    expect((await next(queueId, owner)).body.item.id).toBe(mine.id);
    expect((await review(queueId, mine.id, { scores: { correct: true } }, member)).status).toBe(409);
    const done = await review(queueId, mine.id, { scores: { correct: false, tone: "rude" }, comment: "wrong" }, owner);
    expect(done.body).toMatchObject({
      status: "completed",
      review: { scores: { correct: false, tone: "rude" }, comment: "wrong", reviewerId: ownerId },
    });
  }, 60_000);

  it("turns an item into an evaluation case of a skill in one action", async () => {
    const queueId = await newQueue();
    await add(queueId, { runIds: [runIds[5]] });
    const claim = (await next(queueId, member)).body;
    const itemId = claim.item.id;
    const path = `/api/annotation-queues/${queueId}/items/${itemId}/case`;
    const missing = await api.post<Loose>(path, { skillId: "skl_00000000000000000000000000000000" }, { token: member });
    expect(missing.status).toBe(404);
    const foreignSkill = await api.createSkill(outsider, outsiderOrg, { name: "Theirs" });
    expect((await api.post(path, { skillId: foreignSkill.id }, { token: member })).status).toBe(404);
    const made = await api.post<Loose>(
      path,
      { skillId, expectedOutput: { text: "Hello, user 5!" } },
      { token: member },
    );
    expect(made.status, made.text).toBe(201);
    expect(made.body.item.evaluationCase).toEqual({ id: made.body.evaluationCaseId, skillId });
    const cases = await api.get<Loose>(`/api/skills/${skillId}/evaluation-cases`, { token: owner });
    expect(cases.body.data).toContainEqual(
      expect.objectContaining({
        id: made.body.evaluationCaseId,
        input: claim.content.run.input.variables,
        expectedOutput: { text: "Hello, user 5!" },
      }),
    );
    const got = await api.get<Loose>(`/api/annotation-queues/${queueId}/items/${itemId}`, { token: owner });
    expect(got.body.item.evaluationCase.id).toBe(made.body.evaluationCaseId);
  });

  it("is invisible to another organization, and API keys add and read but do not review", async () => {
    const queueId = await newQueue();
    for (const r of [
      await api.get<Loose>(`/api/annotation-queues/${queueId}`, { token: outsider }),
      await api.get<Loose>(`/api/annotation-queues/${queueId}/items`, { token: outsider }),
      await next(queueId, outsider),
      await add(queueId, { runIds }, outsider),
      await api.patch<Loose>(`/api/annotation-queues/${queueId}`, { name: "Mine now" }, { token: outsider }),
      await api.delete<Loose>(`/api/annotation-queues/${queueId}`, { token: outsider }),
    ]) {
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
    const theirs = await api.get<Loose>(`/api/annotation-queues?organizationId=${organizationId}`, { token: outsider });
    expect(theirs.status).toBe(404);
    expect((await api.get<Loose>(`/api/annotation-queues/${queueId}`, { token: owner })).body.name).toBe("Greetings");
    const byKey = await add(queueId, { runIds: [runIds[1]] }, apiKey);
    expect(byKey.status).toBe(201);
    expect(byKey.body.data[0]).toMatchObject({ target: { type: "run", runId: runIds[1] }, status: "pending" });
    expect((await api.get<Loose>("/api/annotation-queues", { apiKey })).body.data.map((q: Loose) => q.id)).toContain(
      queueId,
    );
  });

  it("refuses an auto-add rule whose target is of another organization or another kind, at its field", async () => {
    const foreignPrompt = (
      await api.createPublishedPrompt(outsider, outsiderOrg, { systemPrompt: "Hi", model: "local/echo" })
    ).prompt.id;
    const refusals: [Record<string, unknown>, string][] = [
      [{ kind: "prompt", id: foreignPrompt, sampleRate: 1 }, `no prompt "${foreignPrompt}" in this organization`],
      // This organization's skill named as a prompt, and a prompt as an agent: the prefix says the kind.
      [{ kind: "prompt", id: skillId, sampleRate: 1 }, "must be a prompt id (prm_…)"],
      [{ kind: "agent", id: promptId, sampleRate: 1 }, "must be an agent id (agt_…)"],
      [
        { kind: "skill", id: `skl_${"0".repeat(32)}`, sampleRate: 1 },
        `no skill "skl_${"0".repeat(32)}" in this organization`,
      ],
    ];
    for (const [autoAdd, issue] of refusals) {
      const r = await api.post<Loose>(
        "/api/annotation-queues",
        { organizationId, name: "Foreign rule", scoreConfigs: SCORES, autoAdd },
        { token: owner },
      );
      expect(r.status, JSON.stringify(autoAdd)).toBe(400);
      expect(r.body.error).toMatchObject({ code: "invalid_argument", details: [{ field: "autoAdd.id", issue }] });
    }
    const listed = await api.get<Loose>(`/api/annotation-queues?organizationId=${organizationId}`, { token: owner });
    expect(listed.body.data.map((q: Loose) => q.name)).not.toContain("Foreign rule");
    // A change to another organization's target is refused too, and leaves the rule as it was.
    const queueId = await newQueue({ autoAdd: { kind: "prompt", id: promptId, sampleRate: 0 } });
    const patched = await api.patch<Loose>(
      `/api/annotation-queues/${queueId}`,
      { autoAdd: { kind: "prompt", id: foreignPrompt, sampleRate: 1 } },
      { token: owner },
    );
    expect(patched.status).toBe(400);
    expect(patched.body.error.details).toEqual([
      { field: "autoAdd.id", issue: `no prompt "${foreignPrompt}" in this organization` },
    ]);
    const kept = await api.get<Loose>(`/api/annotation-queues/${queueId}`, { token: owner });
    expect(kept.body.autoAdd).toMatchObject({ kind: "prompt", id: promptId });
  });

  it("adds a sample of a prompt's runs by rule, once each", async () => {
    const every = await newQueue({ autoAdd: { kind: "prompt", id: promptId, sampleRate: 1 } });
    const none = await newQueue({ autoAdd: { kind: "prompt", id: promptId, sampleRate: 0 } });
    const fresh = [await runPrompt("rule 1"), await runPrompt("rule 2")];
    await eventually(async () => (await items(every)).length >= 2, 30_000);
    const added = await items(every);
    expect(added.map((i) => i.target.runId).sort()).toEqual([...fresh].sort());
    expect(added.every((i: Loose) => i.addedBy === `rule:${every}`)).toBe(true);
    expect(await items(none)).toEqual([]);
    const patched = await api.patch<Loose>(`/api/annotation-queues/${every}`, { autoAdd: null }, { token: owner });
    expect(patched.body.autoAdd).toBeNull();
  }, 60_000);

  it("adds a skill's runs by rule, but not the runs an evaluation of it makes", async () => {
    await api.replaceSkillPrompts(
      owner,
      (await api.get<Loose>(`/api/skills/${skillId}`, { token: owner })).body.draftVersionId,
      [{ promptId }],
    );
    await api.publishSkill(owner, skillId);
    const queueId = await newQueue({ autoAdd: { kind: "skill", id: skillId, sampleRate: 1 } });
    await api.createEvaluationCases(owner, organizationId, skillId, [{ input: { name: "case" } }]);
    const started = await api.startEvaluation(owner, organizationId, skillId, { targets: ["published"] });
    const evaluation = await api.waitForEvaluation(owner, skillId, started.id);
    const evaluated = evaluation.results.flatMap((r: Loose) =>
      Object.values(r.byTarget).flatMap((t: Loose) => (t.runId ? [t.runId] : [])),
    ) as string[];
    expect(evaluated.length).toBeGreaterThan(0);
    const direct = await api.post<Loose>(
      `/api/skills/${skillId}/run`,
      { organizationId, input: { name: "direct" } },
      { token: owner },
    );
    expect(direct.status).toBe(201);
    await eventually(async () => (await items(queueId)).length >= 1, 30_000);
    // The evaluation's run completed before the direct one, and its event carries its
    // evaluationRunId: it is skipped, never added (a second's grace for a consumer running late).
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await items(queueId)).map((i) => i.target.runId)).toEqual([direct.body.id]);
    // A skill run's messages, rendered per step.
    const claim = (await next(queueId, member)).body;
    expect(claim.content.run).toMatchObject({ id: direct.body.id, kind: "skill" });
    expect(claim.content.messages).toEqual([
      { role: "system", content: "Greet direct", step: claim.content.run.steps[0].stepId },
    ]);
  }, 90_000);

  it("shows the messages of a run of an unsaved version and of a model run as they were sent", async () => {
    const history = [{ role: "user", content: "an earlier question" }];
    const draftRun = await api.post<Loose>(
      `/api/prompts/${promptId}/run`,
      {
        organizationId,
        variables: { name: "Ada", history },
        messages: [{ role: "user", content: "the question now" }],
        draft: {
          messages: [
            { role: "system", content: "Draft for {{name}}" },
            { role: "placeholder", name: "history" },
          ],
          variablesSchema: { type: "object", properties: { name: { type: "string" }, history: { type: "array" } } },
        },
      },
      { token: owner },
    );
    expect(draftRun.status, draftRun.text).toBe(201);
    const openai = new OpenAI({ apiKey: owner, organization: organizationId, baseURL: `${running.base}/v1` });
    const { response } = await openai.chat.completions
      .create({
        model: "local/echo",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hello there" },
        ],
      })
      .withResponse();
    const modelRunId = response.headers.get("x-kiln-run-id") ?? "";
    const queueId = await newQueue();
    const added = await add(queueId, { runIds: [draftRun.body.id, modelRunId] });
    expect(added.status, added.text).toBe(201);
    expect(added.body.data).toHaveLength(2);
    const shown = new Map<string, unknown>();
    // A reviewer holds one item at a time: two reviewers claim the two.
    for (const reviewer of [owner, member]) {
      const claim = (await next(queueId, reviewer)).body;
      shown.set(claim.content.run.id, claim.content.messages);
    }
    expect([...shown.keys()].sort()).toEqual([draftRun.body.id, modelRunId].sort());
    // The conversation variable at its placeholder, the run's messages after the template.
    expect(shown.get(draftRun.body.id)).toEqual([
      { role: "system", content: "Draft for Ada", step: null },
      { role: "user", content: "an earlier question", step: null },
      { role: "user", content: "the question now", step: null },
    ]);
    expect(shown.get(modelRunId)).toEqual([
      { role: "system", content: "Be brief.", step: null },
      { role: "user", content: "Hello there", step: null },
    ]);
  });

  it("shows a trace item's root span and model calls", async () => {
    const spans = makeSpans("review-session");
    const traceId = spans[0]?.spanContext().traceId as string;
    const [, exporter] = EXPORTERS[0] as (typeof EXPORTERS)[number];
    expect(await sendSpans(exporter(running.base, apiKey), spans)).toMatchObject({ code: 0 });
    const queueId = await newQueue();
    const r = await add(queueId, { traceIds: [traceId, "0".repeat(32)] });
    expect(r.body.error.details).toEqual([
      { field: "traceIds[1]", issue: `no trace "${"0".repeat(32)}" in this organization` },
    ]);
    await eventually(async () => (await add(queueId, { traceIds: [traceId] })).status === 201, 10_000);
    const claim = (await next(queueId, owner)).body;
    expect(claim.item.target).toEqual({ type: "trace", traceId });
    expect(claim.content.run).toBeNull();
    expect(claim.content.messages).toEqual([]);
    expect(claim.content.trace.spans[0].name).toBe("invoke_agent planner");
    expect(claim.content.trace.spans.slice(1).every((s: Loose) => s.generation !== null)).toBe(true);
    expect(claim.content.trace.spans.map((s: Loose) => s.name)).toContain("chat gpt-4o");
  });
});
