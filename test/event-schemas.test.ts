/**
 * The events on NATS agree with their published JSON Schemas (docs/events/*.schema.json, issue
 * #15): real events taken off a real nats-server, published by a distributed platform for a prompt,
 * a skill and an agent run, each validated against the schema whose `x-kiln-subject` matches its
 * subject. The schemas are closed (additionalProperties false, every field required where the
 * payload always has it), so a field added, dropped or retyped in the bytes fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Bus } from "@kiln/kit/bus";
import { createNatsBus } from "@kiln/kit/bus/nats";
import { createPublishedAgent } from "@kiln/testing/agent-fixture";
import { createTestClient } from "@kiln/testing/test-client";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ROOT } from "./bench/load.js";
import { type Distributed, startDistributed } from "./support/distributed.js";
import { runIdentityFlow } from "./support/identity-flow.js";

const SCHEMA_DIR = join(ROOT, "docs/events");

interface EventSchema {
  file: string;
  subject: string;
  validate: ReturnType<Ajv2020["compile"]>;
}

/** NATS subject matching: `*` one token, `>` the rest. */
function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (p[i] !== "*" && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

describe("events against their JSON Schemas", () => {
  let kiln: Distributed;
  let bus: Bus;
  const events: { subject: string; text: string }[] = [];
  const schemas: EventSchema[] = [];

  beforeAll(async () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true, keywords: ["x-kiln-subject"] });
    (addFormats as unknown as { default: (a: Ajv2020) => void }).default(ajv);
    for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith(".schema.json"))) {
      const schema = JSON.parse(readFileSync(join(SCHEMA_DIR, file), "utf8"));
      schemas.push({ file, subject: schema["x-kiln-subject"], validate: ajv.compile(schema) });
    }
    kiln = await startDistributed({ mongoUrl: inject("mongoUrl"), natsUrl: inject("natsUrl") });
    bus = await createNatsBus({ url: inject("natsUrl"), prefix: kiln.natsPrefix, name: "event-schemas" });
    // A durable consumer of every stream with a schema, attached before anything is published.
    await bus.ensureConsumer({ stream: "RUNS", durable: "schema-check" });
    bus.consume({ stream: "RUNS", durable: "schema-check" }, async (msg) => {
      events.push({ subject: msg.subject, text: msg.string() });
    });
    for (const stream of ["CATALOG", "TRACE_EVENTS", "EVALUATION_EVENTS"]) {
      await bus.ensureConsumer({ stream, durable: "schema-check" });
      bus.consume({ stream, durable: "schema-check" }, async (msg) => {
        events.push({ subject: msg.subject, text: msg.string() });
      });
    }
  }, 180_000);

  afterAll(async () => {
    await bus?.close();
    await kiln?.stop();
  });

  it("has a schema for every stream it checks, naming its subject", () => {
    expect(schemas.map((s) => s.file).sort()).toEqual([
      "budget.threshold_reached.schema.json",
      "catalog.label.moved.schema.json",
      "catalog.prompt.version.created.schema.json",
      "catalog.published.schema.json",
      "evaluation.completed.schema.json",
      "run.completed.schema.json",
      "trace.ingested.schema.json",
    ]);
    for (const s of schemas) expect(s.subject, s.file).toEqual(expect.any(String));
  });

  it("validates every run.completed a prompt, a skill and an agent run publish", async () => {
    const api = createTestClient(kiln.gatewayUrl);
    const flow = await runIdentityFlow(kiln.gatewayUrl, [
      "prompts:read",
      "runs:write",
      "traces:write",
      "evaluations:write",
    ]);
    const { token, organizationId } = flow;
    const { prompt } = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Hello {{name}}",
      variablesSchema: { type: "object", properties: { name: { type: "string" } } },
    });
    const promptRun = await api.post(
      `/api/prompts/${prompt.id}/run`,
      { organizationId, variables: { name: "A" } },
      { token },
    );
    expect(promptRun.status, promptRun.text).toBe(201);
    const skill = await api.createSkill(token, organizationId);
    await api.replaceSkillPrompts(token, skill.draftVersionId ?? "", [{ promptId: prompt.id }]);
    await api.publishSkill(token, skill.id);
    const skillRun = await api.post(`/api/skills/${skill.id}/run`, { organizationId, input: { name: "B" } }, { token });
    expect(skillRun.status, skillRun.text).toBe(201);
    const agent = await createPublishedAgent(api, token, organizationId);
    const agentRun = await api.post(
      `/api/agents/${agent.agentId}/run`,
      { organizationId, inputs: { topic: "t", city: "c" } },
      { token },
    );
    expect(agentRun.status, agentRun.text).toBe(201);
    // A skill's evaluation and a prompt's on one dataset item: an evaluation.completed each.
    const dataset = await api.post<{ id: string }>("/api/datasets", { organizationId, name: "Events" }, { token });
    await api.post(`/api/datasets/${dataset.body.id}/items`, { items: [{ input: { name: "C" } }] }, { token });
    const evaluations = [
      await api.post(
        `/api/skills/${skill.id}/evaluations/run`,
        { organizationId, datasetId: dataset.body.id },
        { token },
      ),
      await api.post(
        `/api/prompts/${prompt.id}/evaluations/run`,
        { organizationId, datasetId: dataset.body.id, assertions: [{ type: "contains", value: "C" }] },
        { token },
      ),
    ];
    for (const e of evaluations) expect(e.status, e.text).toBe(202);

    // The agent's prompt steps are stored (and published) as runs of their own too.
    const mine = () => events.filter((e) => e.text.includes(organizationId));
    const kinds = () => [...new Set(mine().map((e) => e.subject))].sort();
    const deadline = Date.now() + 20_000;
    const expected = [
      "catalog.agent.published",
      "catalog.label.moved",
      "catalog.prompt.published",
      "catalog.prompt.version.created",
      "catalog.skill.published",
      "evaluation-events.completed",
      "runs.completed.agent",
      "runs.completed.prompt",
      "runs.completed.skill",
      "trace-events.ingested",
    ];
    // An ingested generation span (and a plain span, which names no generation).
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const span = (spanId: string, attributes: unknown[]) => ({
      traceId,
      spanId,
      name: spanId,
      startTimeUnixNano: "1",
      endTimeUnixNano: "2",
      attributes,
    });
    const gen = [{ key: "gen_ai.request.model", value: { stringValue: "gpt-4o" } }];
    const ingested = await fetch(`${kiln.gatewayUrl}/otel/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": flow.apiKey },
      body: JSON.stringify({
        resourceSpans: [{ scopeSpans: [{ spans: [span("b7ad6b7169203331", gen), span("00f067aa0ba902b7", [])] }] }],
      }),
    });
    expect(ingested.status).toBe(200);
    // A custom label's move and its removal, beside the publishes' production moves.
    await api.put(`/api/prompts/${prompt.id}/labels/staging`, { versionId: prompt.publishedVersionId }, { token });
    await api.delete(`/api/prompts/${prompt.id}/labels/staging`, { token });
    while (kinds().length < expected.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(kinds()).toEqual(expected);
    const actions = () =>
      new Set(mine().flatMap((e) => (e.subject === "catalog.label.moved" ? [JSON.parse(e.text).data.action] : [])));
    while (actions().size < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(actions()).toEqual(new Set(["published", "moved", "deleted"]));
    const completed = () => mine().filter((e) => e.subject === "evaluation-events.completed");
    while (completed().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const subjects = completed().map((e) => JSON.parse(e.text).data);
    expect(subjects.map((d) => (d.promptId ? "prompt" : "skill")).sort()).toEqual(["prompt", "skill"]);
    for (const event of mine()) {
      const matching = schemas.filter((s) => subjectMatches(s.subject, event.subject));
      expect(matching, event.subject).toHaveLength(1);
      const [schema] = matching;
      const payload = JSON.parse(event.text);
      const valid = schema?.validate(payload);
      expect(valid, `${event.subject} ${event.text}\n${JSON.stringify(schema?.validate.errors)}`).toBe(true);
    }
  }, 120_000);
});
