/**
 * Reading traces and sessions (issue #36) in both run modes over real HTTP: the list's filters
 * (user, label, cost, ...), bad filters answered 400, sessions built from session ids, a session's
 * conversation, pagination, and nothing of another organization's.
 */
import { createTestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, eventually, type FlowResult, runIdentityFlow } from "./support/identity-flow.js";
import { TRACE_MODES } from "./support/trace-modes.js";
import { otlpTrace, postTraces, seedTraces } from "./support/trace-seed.js";

const ids = (r: { body: { data: { traceId: string }[] } }) => r.body.data.map((t) => t.traceId);

describe.each(TRACE_MODES)("traces and sessions ($name)", (mode) => {
  let stop: () => Promise<void>;
  let base: string;
  let a: FlowResult;
  let b: FlowResult;
  const seed = seedTraces("api");
  const { first, second, failed, run } = seed.traces;
  const list = (query: string, key = a.apiKey) => call(base, "GET", `/api/traces?${query}`, { apiKey: key });

  beforeAll(async () => {
    const started = await mode.start({ runTraces: true });
    stop = started.stop;
    base = started.baseUrl;
    a = await runIdentityFlow(base, ["traces:write", "traces:read", "runs:write"]);
    b = await runIdentityFlow(base, ["traces:write", "traces:read"]);
    await postTraces(base, a.apiKey, [first, second, failed, run]);
  }, 180_000);

  afterAll(async () => {
    await stop?.();
  });

  it("summarizes user, run label and total cost, and each filter narrows the list", async () => {
    const all = await list("");
    expect(ids(all)).toEqual([run.traceId, failed.traceId, second.traceId, first.traceId]);
    const byId = new Map<string, Record<string, unknown>>(
      all.body.data.map((t: { traceId: string }) => [t.traceId, t]),
    );
    expect(byId.get(first.traceId)).toMatchObject({
      userId: seed.user,
      sessionId: seed.session,
      runId: null,
      label: null,
    });
    expect(byId.get(first.traceId)?.costUsd as number).toBeCloseTo(seed.costs.first, 12);
    expect(byId.get(second.traceId)).toMatchObject({ userId: seed.user, sessionId: seed.session });
    expect(byId.get(failed.traceId)).toMatchObject({ userId: seed.otherUser, status: "error", costUsd: null });
    expect(byId.get(run.traceId)).toMatchObject({ runId: `run_${"0".repeat(31)}1`, label: seed.label, userId: null });

    expect(ids(await list(`user=${seed.user}`))).toEqual([second.traceId, first.traceId]);
    expect(ids(await list(`user=${seed.otherUser}`))).toEqual([failed.traceId]);
    expect(ids(await list(`label=${seed.label}`))).toEqual([run.traceId]);
    expect(ids(await list(`session=${seed.otherSession}`))).toEqual([failed.traceId]);
    expect(ids(await list("model=gpt-4o"))).toEqual([second.traceId]);
    expect(ids(await list("status=error"))).toEqual([failed.traceId]);
    expect(ids(await list("name=escalate"))).toEqual([failed.traceId]);
    // Unpriced traces (and those without model calls) match no cost range.
    expect(ids(await list("minCost=0.001"))).toEqual([second.traceId]);
    expect(ids(await list("maxCost=0.001"))).toEqual([first.traceId]);
    expect(ids(await list("minCost=0&maxCost=1"))).toEqual([second.traceId, first.traceId]);
    expect(ids(await list(`user=${seed.user}&maxCost=0.001`))).toEqual([first.traceId]);
    expect(ids(await list("user=nobody"))).toEqual([]);
  });

  it("answers 400 naming the field for a bad filter", async () => {
    for (const [query, field] of [
      ["minCost=abc", "minCost"],
      ["minCost=1e3", "minCost"],
      ["maxCost=-1", "maxCost"],
      ["minCost=0.5&maxCost=0.1", "maxCost"],
      ["from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "to"],
      ["from=yesterday", "from"],
      ["status=broken", "status"],
      ["user=", "user"],
      ["cursor=not-a-cursor", "cursor"],
    ] as const) {
      const r = await list(query);
      expect(r.status, query).toBe(400);
      expect(r.body.error.code, query).toBe("invalid_argument");
      expect(JSON.stringify(r.body.error.details), query).toContain(field);
    }
  });

  it("lists sessions by latest activity with their totals, and reads one as a conversation", async () => {
    const sessions = await call(base, "GET", "/api/sessions", { apiKey: a.apiKey });
    expect(sessions.status).toBe(200);
    expect(sessions.body.data.map((s: { sessionId: string }) => s.sessionId)).toEqual([
      seed.otherSession,
      seed.session,
    ]);
    const [other, chat] = sessions.body.data;
    expect(chat).toMatchObject({
      sessionId: seed.session,
      organizationId: a.organizationId,
      traceCount: 2,
      inputTokens: 1200,
      outputTokens: 600,
      totalTokens: 1800,
      userId: seed.user,
    });
    expect(chat.costUsd).toBeCloseTo(seed.costs.first + seed.costs.second, 12);
    expect(Date.parse(chat.lastTime) - Date.parse(chat.firstTime)).toBe(60_000 + 700);
    expect(other).toMatchObject({ traceCount: 1, costUsd: null, userId: seed.otherUser });

    const one = await call(base, "GET", `/api/sessions/${seed.session}`, { apiKey: a.apiKey });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ sessionId: seed.session, traceCount: 2, nextCursor: null });
    expect(one.body.traces.map((t: { traceId: string }) => t.traceId)).toEqual([first.traceId, second.traceId]);
    // The root's own input and output (OpenInference), else the first call's messages and the last call's answer.
    expect(one.body.traces[0]).toMatchObject({ input: "Where is my order?", output: "It ships tomorrow." });
    expect(one.body.traces[1].input).toEqual([
      { role: "user", parts: [{ type: "text", content: "Can I change the address?" }] },
    ]);
    expect(one.body.traces[1].output).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "Yes, until it ships." }] },
    ]);

    const page1 = await call(base, "GET", `/api/sessions/${seed.session}?limit=1`, { apiKey: a.apiKey });
    expect(page1.body.traces.map((t: { traceId: string }) => t.traceId)).toEqual([first.traceId]);
    const page2 = await call(base, "GET", `/api/sessions/${seed.session}?limit=1&cursor=${page1.body.nextCursor}`, {
      apiKey: a.apiKey,
    });
    expect(page2.body.traces.map((t: { traceId: string }) => t.traceId)).toEqual([second.traceId]);
    expect(page2.body.nextCursor).toBeNull();
    const s1 = await call(base, "GET", "/api/sessions?limit=1", { apiKey: a.apiKey });
    const s2 = await call(base, "GET", `/api/sessions?limit=1&cursor=${s1.body.nextCursor}`, { apiKey: a.apiKey });
    expect([...s1.body.data, ...s2.body.data].map((s: { sessionId: string }) => s.sessionId)).toEqual([
      seed.otherSession,
      seed.session,
    ]);
    expect((await call(base, "GET", `/api/sessions?user=${seed.user}`, { apiKey: a.apiKey })).body.data).toHaveLength(
      1,
    );
    expect((await call(base, "GET", "/api/sessions?cursor=bogus", { apiKey: a.apiKey })).status).toBe(400);
  });

  it("moves a trace between sessions when its spans say so, and a session without traces goes", async () => {
    const moving = otlpTrace(Date.now() - 5_000, [
      { name: "turn", at: 0, ms: 10, attributes: { "session.id": "before-move" } },
    ]);
    await postTraces(base, a.apiKey, [moving]);
    expect((await call(base, "GET", "/api/sessions/before-move", { apiKey: a.apiKey })).body.traceCount).toBe(1);
    const span = moving.body.resourceSpans[0]?.scopeSpans[0]?.spans[0];
    if (span) span.attributes = [{ key: "session.id", value: { stringValue: "after-move" } }];
    await postTraces(base, a.apiKey, [moving]);
    expect((await call(base, "GET", "/api/sessions/before-move", { apiKey: a.apiKey })).status).toBe(404);
    const after = await call(base, "GET", "/api/sessions/after-move", { apiKey: a.apiKey });
    expect(after.body.traces.map((t: { traceId: string }) => t.traceId)).toEqual([moving.traceId]);
  });

  it("shows another organization nothing: its lists are empty, reads are 404", async () => {
    expect((await list("", b.apiKey)).body.data).toEqual([]);
    expect((await call(base, "GET", "/api/sessions", { apiKey: b.apiKey })).body.data).toEqual([]);
    expect((await call(base, "GET", `/api/sessions/${seed.session}`, { apiKey: b.apiKey })).status).toBe(404);
    expect((await call(base, "GET", `/api/traces/${first.traceId}`, { apiKey: b.apiKey })).status).toBe(404);
    const unknown = await call(base, "GET", "/api/sessions/never-seen", { apiKey: a.apiKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
    const anonymous = await call(base, "GET", "/api/sessions");
    expect(anonymous.status).toBe(401);
  });

  it("names the Kiln run a trace records, so the list links it to its run", async () => {
    const { prompt } = await createTestClient(base).createPublishedPrompt(a.token, a.organizationId, {
      model: "local/echo",
      systemPrompt: "Say hi.",
    });
    const r = await call(base, "POST", `/api/prompts/${prompt.id}/run`, {
      apiKey: a.apiKey,
      body: { organizationId: a.organizationId, variables: {} },
    });
    expect(r.status).toBe(201);
    const traceId = /^00-([0-9a-f]{32})-/.exec(r.headers.get("traceparent") ?? "")?.[1];
    let got: { status: number; body: Record<string, unknown> } = { status: 0, body: {} };
    await eventually(async () => {
      got = await call(base, "GET", `/api/traces/${traceId}`, { apiKey: a.apiKey });
      return got.status === 200;
    }, 15_000);
    expect(got.body).toMatchObject({ runId: r.body.id, label: null, name: `run_prompt ${prompt.id}` });
    expect(ids(await list(`name=run_prompt%20${prompt.id}`))).toEqual([traceId]);
  });
});
