import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_MODES, type RunningKiln } from "./support/run-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field.
type Loose = any;

describe.each(RUN_MODES)("datasets in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let owner: string;
  let organizationId: string;
  let outsider: string;
  let outsiderOrg: string;
  let apiKey: string;

  const create = async (name: string, token = owner, org = organizationId) => {
    const r = await api.post<Loose>("/api/datasets", { organizationId: org, name }, { token });
    expect(r.status, r.text).toBe(201);
    return r.body;
  };
  const dataset = async (id: string) => {
    const r = await api.get<Loose>(`/api/datasets/${id}`, { token: owner });
    expect(r.status, r.text).toBe(200);
    return r.body;
  };
  const itemsAt = async (id: string, version?: number) => {
    const r = await api.get<Loose>(`/api/datasets/${id}/items`, { token: owner, query: { version, limit: 200 } });
    expect(r.status, r.text).toBe(200);
    return r.body;
  };
  const add = (id: string, items: unknown[], token = owner) =>
    api.post<Loose>(`/api/datasets/${id}/items`, { items }, { token });
  const expectRefused = (r: Loose, status: number, code: string, field?: string) => {
    expect(r.status, r.text).toBe(status);
    expect(r.body.error).toMatchObject({ code, message: expect.any(String), requestId: expect.any(String) });
    if (field) expect(r.body.error.details.map((d: Loose) => d.field)).toContain(field);
  };

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    owner = (await api.signUp()).accessToken;
    organizationId = (await api.onboard(owner)).organization.id;
    outsider = (await api.signUp()).accessToken;
    outsiderOrg = (await api.onboard(outsider)).organization.id;
    apiKey = (await api.createApiKey(owner, organizationId, ["evaluations:read", "evaluations:write"])).key;
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("creates, reads, renames, lists a page at a time and deletes datasets", async () => {
    const first = await create("Greetings");
    expect(first).toMatchObject({ organizationId, name: "Greetings", description: "", version: 0, itemCount: 0 });
    expect(first.id).toMatch(/^dst_[0-9a-f]{32}$/);
    // An API key names no organization: its own.
    const keyed = await api.post<Loose>("/api/datasets", { name: "Keyed", description: "by key" }, { apiKey });
    expect(keyed.status, keyed.text).toBe(201);
    expect(keyed.body.organizationId).toBe(organizationId);
    const third = await create("Third");

    const renamed = await api.patch<Loose>(
      `/api/datasets/${first.id}`,
      { description: "hello and goodbye" },
      {
        token: owner,
      },
    );
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Greetings", description: "hello and goodbye", version: 0 });

    const page1 = await api.get<Loose>("/api/datasets", { token: owner, query: { organizationId, limit: 2 } });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((d: Loose) => d.id)).toEqual([third.id, keyed.body.id]);
    const page2 = await api.get<Loose>("/api/datasets", {
      token: owner,
      query: { organizationId, limit: 2, cursor: page1.body.nextCursor },
    });
    expect(page2.body.data.map((d: Loose) => d.id)).toContain(first.id);

    const deleted = await api.delete<Loose>(`/api/datasets/${third.id}`, { token: owner });
    expect(deleted.status).toBe(200);
    expect(deleted.body.id).toBe(third.id);
    expectRefused(await api.get(`/api/datasets/${third.id}`, { token: owner }), 404, "not_found");
  });

  it("refuses bad datasets and bad items with the field named, and changes nothing", async () => {
    expectRefused(
      await api.post("/api/datasets", { organizationId, name: "   " }, { token: owner }),
      400,
      "invalid_argument",
      "name",
    );
    expectRefused(
      await api.post("/api/datasets", { organizationId, name: "x", extra: 1 }, { token: owner }),
      400,
      "invalid_argument",
    );
    expectRefused(
      await api.post("/api/datasets", { name: "no org" }, { token: owner }),
      400,
      "invalid_argument",
      "organizationId",
    );
    const d = await create("Strict");
    expectRefused(await add(d.id, []), 400, "invalid_argument", "items");
    expectRefused(await add(d.id, [{ input: { a: 1 } }, { input: "text" }]), 400, "invalid_argument", "items[1].input");
    expectRefused(await add(d.id, [{ input: { a: 1 }, metadata: [1] }]), 400, "invalid_argument", "items[0].metadata");
    expectRefused(await add(d.id, [{ input: { a: 1 }, other: 2 }]), 400, "invalid_argument");
    const after = await dataset(d.id);
    expect(after).toMatchObject({ version: 0, itemCount: 0 });
    expect((await itemsAt(d.id)).data).toEqual([]);
    expectRefused(
      await api.get(`/api/datasets/${d.id}/items`, { token: owner, query: { version: 1 } }),
      400,
      "invalid_argument",
      "version",
    );
  });

  it("makes a version of every change and reads each version as it was", async () => {
    const d = await create("Versions");
    const a = await add(d.id, [
      { input: { name: "Ada" }, expectedOutput: "Hello Ada" },
      { input: { name: "Grace" }, metadata: { tier: "gold" } },
      { input: { name: "Alan" }, expectedOutput: { nested: [1, 2] } },
    ]);
    expect(a.status, a.text).toBe(201);
    expect(a.body.dataset).toMatchObject({ version: 1, itemCount: 3 });
    expect(a.body.data.map((i: Loose) => i.addedInVersion)).toEqual([1, 1, 1]);
    expect(a.body.data[0]).toMatchObject({
      input: { name: "Ada" },
      expectedOutput: "Hello Ada",
      metadata: {},
      source: null,
    });
    expect(a.body.data[1]).toMatchObject({ expectedOutput: null, metadata: { tier: "gold" }, removedInVersion: null });
    const b = await add(d.id, [{ input: { name: "Edsger" } }, { input: { name: "Barbara" } }]);
    expect(b.body.dataset).toMatchObject({ version: 2, itemCount: 5 });
    const grace = a.body.data[1].id;
    const removed = await api.delete<Loose>(`/api/datasets/${d.id}/items/${grace}`, { token: owner });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toMatchObject({ id: grace, addedInVersion: 1, removedInVersion: 3 });
    expectRefused(await api.delete(`/api/datasets/${d.id}/items/${grace}`, { token: owner }), 404, "not_found");
    expect(await dataset(d.id)).toMatchObject({ version: 3, itemCount: 4 });

    const names = (page: Loose) => page.data.map((i: Loose) => i.input.name);
    expect(names(await itemsAt(d.id, 1))).toEqual(["Ada", "Grace", "Alan"]);
    expect(names(await itemsAt(d.id, 2))).toEqual(["Ada", "Grace", "Alan", "Edsger", "Barbara"]);
    expect(names(await itemsAt(d.id, 3))).toEqual(["Ada", "Alan", "Edsger", "Barbara"]);
    const current = await itemsAt(d.id);
    expect(current.version).toBe(3);
    expect(names(current)).toEqual(["Ada", "Alan", "Edsger", "Barbara"]);
    // An earlier version still shows the removed item, with the version that removed it.
    expect((await itemsAt(d.id, 2)).data[1]).toMatchObject({ id: grace, removedInVersion: 3 });

    // Paged in the order the items were added.
    const p1 = await api.get<Loose>(`/api/datasets/${d.id}/items`, { token: owner, query: { version: 2, limit: 2 } });
    expect(names(p1.body)).toEqual(["Ada", "Grace"]);
    const p2 = await api.get<Loose>(`/api/datasets/${d.id}/items`, {
      token: owner,
      query: { version: 2, limit: 2, cursor: p1.body.nextCursor },
    });
    expect(names(p2.body)).toEqual(["Alan", "Edsger"]);
    const p3 = await api.get<Loose>(`/api/datasets/${d.id}/items`, {
      token: owner,
      query: { version: 2, limit: 2, cursor: p2.body.nextCursor },
    });
    expect(names(p3.body)).toEqual(["Barbara"]);
    expect(p3.body.nextCursor).toBeNull();
    expectRefused(
      await api.get(`/api/datasets/${d.id}/items`, { token: owner, query: { version: 4 } }),
      400,
      "invalid_argument",
      "version",
    );
  });

  it("gives changes that race one version each, none lost", async () => {
    const d = await create("Racing");
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => add(d.id, [{ input: { i } }, { input: { i } }])),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(answers.map((a) => a.body.dataset.version).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await dataset(d.id)).toMatchObject({ version: 6, itemCount: 12 });
    for (const a of answers) {
      const v = a.body.dataset.version;
      expect((await itemsAt(d.id, v)).data).toHaveLength(2 * v);
      expect(new Set(a.body.data.map((i: Loose) => i.addedInVersion))).toEqual(new Set([v]));
    }
  });

  it("imports CSV and JSONL, and a file with one bad row imports nothing", async () => {
    const d = await create("Imported");
    const csv = [
      "name,city,expected_output,metadata.source,extra",
      'Ada,"Paris, France",Hello Ada,wiki,"{""a"": [1]}"',
      "Grace,Oslo,,,",
      "",
    ].join("\n");
    const raw = await api.request<Loose>("POST", `/api/datasets/${d.id}/import`, {
      token: owner,
      rawBody: csv,
      headers: { "content-type": "text/csv" },
    });
    expect(raw.status, raw.text).toBe(201);
    expect(raw.body).toMatchObject({ imported: 2, dataset: { version: 1, itemCount: 2 } });
    const items = (await itemsAt(d.id)).data;
    expect(items[0]).toMatchObject({
      input: { name: "Ada", city: "Paris, France", extra: { a: [1] } },
      expectedOutput: "Hello Ada",
      metadata: { source: "wiki" },
    });
    expect(items[1]).toMatchObject({
      input: { name: "Grace", city: "Oslo", extra: "" },
      expectedOutput: null,
      metadata: {},
    });

    const jsonl = [
      JSON.stringify({ input: { name: "Alan" }, expectedOutput: { greeting: "Hi" } }),
      "",
      JSON.stringify({ input: { name: "Edsger" }, expected_output: "Hey", metadata: { n: 1 } }),
    ].join("\n");
    const lines = await api.request<Loose>("POST", `/api/datasets/${d.id}/import`, {
      token: owner,
      rawBody: jsonl,
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(lines.status, lines.text).toBe(201);
    expect(lines.body).toMatchObject({ imported: 2, dataset: { version: 2, itemCount: 4 } });
    const viaJson = await api.post<Loose>(
      `/api/datasets/${d.id}/import`,
      { format: "csv", content: "name\nBarbara\n" },
      { apiKey },
    );
    expect(viaJson.status, viaJson.text).toBe(201);
    expect(viaJson.body.dataset).toMatchObject({ version: 3, itemCount: 5 });
    expect((await itemsAt(d.id)).data.slice(2).map((i: Loose) => [i.input.name, i.expectedOutput])).toEqual([
      ["Alan", { greeting: "Hi" }],
      ["Edsger", "Hey"],
      ["Barbara", null],
    ]);

    // One bad row among good ones: 400 naming the row and the field, and nothing imported.
    const badCsv = "name,expected_output\nAda,fine\nGrace,{not json\n";
    const refused = await api.request<Loose>("POST", `/api/datasets/${d.id}/import`, {
      token: owner,
      rawBody: badCsv,
      headers: { "content-type": "text/csv" },
    });
    expectRefused(refused, 400, "invalid_argument", "rows[1].expected_output");
    expect(refused.body.error.details[0].issue).toMatch(/line 3/);
    const badLines = `${JSON.stringify({ input: { a: 1 } })}\n${JSON.stringify({ input: [1] })}\nnot json\n`;
    const refusedLines = await api.post<Loose>(
      `/api/datasets/${d.id}/import`,
      { format: "jsonl", content: badLines },
      { token: owner },
    );
    expectRefused(refusedLines, 400, "invalid_argument", "rows[1].input");
    expect(refusedLines.body.error.details.map((x: Loose) => x.field)).toContain("rows[2]");
    const ragged = await api.post<Loose>(
      `/api/datasets/${d.id}/import`,
      { format: "csv", content: "a,b\n1,2,3\n" },
      { token: owner },
    );
    expectRefused(ragged, 400, "invalid_argument", "content");
    expectRefused(
      await api.post(`/api/datasets/${d.id}/import`, { format: "xlsx", content: "x" }, { token: owner }),
      400,
      "invalid_argument",
    );
    expect(await dataset(d.id)).toMatchObject({ version: 3, itemCount: 5 });
  });

  it("copies evaluation cases, runs and annotation-queue items, and refuses unknown ones", async () => {
    const prompt = await api.createPublishedPrompt(owner, organizationId, {
      systemPrompt: "Hello {{name}}",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      model: "local/echo",
    });
    const skill = await api.createSkill(owner, organizationId, { name: "Greeter" });
    const cases = await api.createEvaluationCases(owner, organizationId, skill.id, [
      { name: "ada", input: { name: "Ada" }, expectedOutput: "Hello Ada" },
    ]);
    const run = await api.post<Loose>(
      `/api/prompts/${prompt.prompt.id}/run`,
      { organizationId, variables: { name: "Grace" } },
      { token: owner },
    );
    expect(run.status, run.text).toBe(201);
    const queued = await api.post<Loose>(
      `/api/prompts/${prompt.prompt.id}/run`,
      { organizationId, variables: { name: "Alan" } },
      { token: owner },
    );
    const queue = await api.post<Loose>("/api/annotation-queues", { organizationId, name: "Q" }, { token: owner });
    expect(queue.status, queue.text).toBe(201);
    const added = await api.post<Loose>(
      `/api/annotation-queues/${queue.body.id}/items`,
      { runIds: [queued.body.id] },
      { token: owner },
    );
    const annotationItemId = added.body.data[0].id;

    const d = await create("Copied");
    const from = (body: unknown, token = owner) => api.post<Loose>(`/api/datasets/${d.id}/items/from`, body, { token });
    // The other organization's run is as unknown as an id that names nothing.
    const outsiderPrompt = await api.createPublishedPrompt(outsider, outsiderOrg, {
      systemPrompt: "Hi",
      model: "local/echo",
    });
    const foreignRun = await api.post<Loose>(
      `/api/prompts/${outsiderPrompt.prompt.id}/run`,
      { organizationId: outsiderOrg, variables: {} },
      { token: outsider },
    );
    expect(foreignRun.status).toBe(201);
    expectRefused(
      await from({ evaluationCaseIds: [cases[0]?.id], runIds: [run.body.id, foreignRun.body.id] }),
      400,
      "invalid_argument",
      "runIds[1]",
    );
    expectRefused(await from({}), 400, "invalid_argument");
    expect(await dataset(d.id)).toMatchObject({ version: 0, itemCount: 0 });

    const copied = await from({
      evaluationCaseIds: [cases[0]?.id],
      runIds: [run.body.id],
      annotationItemIds: [annotationItemId],
    });
    expect(copied.status, copied.text).toBe(201);
    expect(copied.body.dataset).toMatchObject({ version: 1, itemCount: 3 });
    expect(copied.body.data.map((i: Loose) => [i.input, i.expectedOutput, i.source])).toEqual([
      [{ name: "Ada" }, "Hello Ada", { kind: "evaluation_case", id: cases[0]?.id }],
      [{ name: "Grace" }, "Hello Grace", { kind: "run", id: run.body.id }],
      [{ name: "Alan" }, "Hello Alan", { kind: "annotation_item", id: annotationItemId }],
    ]);
  });

  it("runs a skill's evaluation on a dataset version and records which", async () => {
    const prompt = await api.createPublishedPrompt(owner, organizationId, {
      systemPrompt: "Hello {{name}}",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      model: "local/echo",
    });
    const created = await api.createSkill(owner, organizationId, { name: "Dataset greeter" });
    await api.replaceSkillPrompts(owner, created.draftVersionId ?? "", [{ promptId: prompt.prompt.id }]);
    const skill = await api.publishSkill(owner, created.id);
    const d = await create("Eval set");
    const v1 = await add(d.id, [
      { input: { name: "Ada" }, expectedOutput: "Hello Ada" },
      { input: { name: "Grace" }, expectedOutput: "Goodbye Grace" },
    ]);
    await add(d.id, [{ input: { name: "Alan" }, expectedOutput: "Hello Alan" }]);
    const start = (body: unknown) => api.post<Loose>(`/api/skills/${skill.id}/evaluations/run`, body, { token: owner });

    const r = await start({ organizationId, targets: ["published"], datasetId: d.id, datasetVersion: 1 });
    expect(r.status, r.text).toBe(202);
    const done: Loose = await api.waitForEvaluation(owner, skill.id, r.body.id);
    expect(done).toMatchObject({ status: "completed", datasetId: d.id, datasetVersion: 1 });
    expect(done.results.map((x: Loose) => x.caseId)).toEqual(v1.body.data.map((i: Loose) => i.id));
    expect(done.results.map((x: Loose) => x.byTarget.published.outcome)).toEqual(["pass", "fail"]);

    const latest = await start({ organizationId, targets: ["published"], datasetId: d.id });
    expect(latest.status, latest.text).toBe(202);
    const all: Loose = await api.waitForEvaluation(owner, skill.id, latest.body.id);
    expect(all).toMatchObject({ datasetId: d.id, datasetVersion: 2 });
    expect(all.results).toHaveLength(3);
    const listed = await api.get<Loose>(`/api/skills/${skill.id}/evaluations`, { token: owner });
    expect(listed.body.data[0]).toMatchObject({ id: latest.body.id, datasetId: d.id, datasetVersion: 2 });

    expectRefused(
      await start({ organizationId, datasetId: d.id, datasetVersion: 3 }),
      400,
      "invalid_argument",
      "datasetVersion",
    );
    expectRefused(
      await start({ organizationId, datasetId: d.id, caseIds: ["evc_00000000000000000000000000000000"] }),
      400,
      "invalid_argument",
      "caseIds",
    );
    const empty = await create("Empty");
    expectRefused(await start({ organizationId, datasetId: empty.id }), 409, "failed_precondition");
    const foreign = await create("Theirs", outsider, outsiderOrg);
    expectRefused(await start({ organizationId, datasetId: foreign.id }), 400, "invalid_argument", "datasetId");
  });

  it("shows another organization's dataset as missing, whatever the route", async () => {
    const d = await create("Private");
    await add(d.id, [{ input: { a: 1 } }]);
    const item = (await itemsAt(d.id)).data[0].id;
    const as = { token: outsider };
    expectRefused(await api.get(`/api/datasets/${d.id}`, as), 404, "not_found");
    expectRefused(await api.get(`/api/datasets/${d.id}/items`, as), 404, "not_found");
    expectRefused(await api.patch(`/api/datasets/${d.id}`, { name: "Mine" }, as), 404, "not_found");
    expectRefused(await api.post(`/api/datasets/${d.id}/items`, { items: [{ input: {} }] }, as), 404, "not_found");
    expectRefused(
      await api.post(`/api/datasets/${d.id}/import`, { format: "csv", content: "a\n1\n" }, as),
      404,
      "not_found",
    );
    expectRefused(await api.delete(`/api/datasets/${d.id}/items/${item}`, as), 404, "not_found");
    expectRefused(await api.delete(`/api/datasets/${d.id}`, as), 404, "not_found");
    expectRefused(await api.get("/api/datasets", { ...as, query: { organizationId } }), 404, "not_found");
    const theirs = await api.get<Loose>("/api/datasets", { ...as, query: { organizationId: outsiderOrg } });
    expect(theirs.body.data.map((x: Loose) => x.id)).not.toContain(d.id);
    expect(await dataset(d.id)).toMatchObject({ name: "Private", version: 1, itemCount: 1 });
  });
});
