/**
 * Prompt partials over real HTTP (issue #50, api.md "Partials"), in both run modes: `{{> name}}`
 * and `{{> name@label}}` rendered with the including run's variables (local/echo answers the text
 * it was sent), a version's `includes`, label moves and a publish of the included prompt seen by
 * the very next run, cycles refused with 400 naming them (on creation, publish and label move),
 * includes nested too deep refused, and an include that does not resolve stored as a failed run
 * (`unresolved_partial`), another organization's prompt of that name included; MCP `prompts/get`
 * renders the includes too.
 */
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_MODES, type RunningKiln } from "./support/run-modes.js";

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field.
type Loose = any;

const MOOD = { type: "object", properties: { name: { type: "string" }, mood: { type: "string" } } };

describe.each(RUN_MODES)("prompt partials in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let owner: string;
  let org: string;
  // A suffix per suite: names are looked up in the organization, which is fresh, but readable.
  const tone = "shared/tone";
  let toneId: string;
  let toneV1: string;
  let toneV2: string;
  let greeterId: string;
  let greeterV1: string;

  const createPrompt = async (name: string) => (await api.createPrompt(owner, org, { name })).id;
  const version = (promptId: string, body: Record<string, unknown>) =>
    api.post<Loose>(`/api/prompts/${promptId}/versions`, { model: "local/echo", ...body }, { token: owner });
  const created = async (promptId: string, body: Record<string, unknown>) => {
    const r = await version(promptId, body);
    expect(r.status, r.text).toBe(201);
    return r.body.id as string;
  };
  const publish = (promptId: string, versionId: string) =>
    api.post<Loose>(`/api/prompts/${promptId}/publish`, { versionId }, { token: owner });
  const setLabel = (promptId: string, label: string, versionId: string) =>
    api.put<Loose>(`/api/prompts/${promptId}/labels/${label}`, { versionId }, { token: owner });
  const run = (promptId: string, body: Record<string, unknown> = {}) =>
    api.post<Loose>(`/api/prompts/${promptId}/run`, { organizationId: org, variables: {}, ...body }, { token: owner });
  const textOf = async (promptId: string, body: Record<string, unknown>) => {
    const r = await run(promptId, body);
    expect(r.status, r.text).toBe(201);
    expect(r.body.status, r.text).toBe("succeeded");
    return r.body.output.text as string;
  };
  const expectCycle = (r: Loose, path: string, field: string) => {
    expect(r.status, r.text).toBe(400);
    expect(r.body.error.code).toBe("invalid_argument");
    expect(r.body.error.message).toBe(`the includes make a cycle: ${path}`);
    expect(r.body.error.details).toEqual([{ field, issue: `makes a cycle of includes: ${path}` }]);
  };

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    owner = (await api.signUp()).accessToken;
    org = (await api.onboard(owner)).organization.id;
    toneId = await createPrompt(tone);
    toneV1 = await created(toneId, { systemPrompt: "Be {{mood}}.", variablesSchema: MOOD });
    expect((await publish(toneId, toneV1)).status).toBe(200);
    toneV2 = await created(toneId, { systemPrompt: "Be very {{mood}}.", variablesSchema: MOOD });
    expect((await setLabel(toneId, "staging", toneV2)).status).toBe(200);
    greeterId = await createPrompt("greeter");
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("renders {{> name}} and {{> name@label}} with the including run's variables, and lists them as includes", async () => {
    const r = await version(greeterId, {
      messages: [
        { role: "system", content: `Hello {{name}}.\n{{> ${tone}}}` },
        { role: "user", content: `Sign: {{> ${tone}@staging}} {{> ${tone}@production}}` },
      ],
      variablesSchema: MOOD,
    });
    expect(r.status, r.text).toBe(201);
    greeterV1 = r.body.id;
    expect(r.body.includes).toEqual([
      { name: tone, label: "production" },
      { name: tone, label: "staging" },
    ]);
    // local/echo answers the system and user texts it was sent, joined by a blank line.
    expect(await textOf(greeterId, { versionId: greeterV1, variables: { name: "Ada", mood: "calm" } })).toBe(
      "Hello Ada.\nBe calm.\n\nSign: Be very calm. Be calm.",
    );
    // The read of the version with ?partials=true says what each include stands for now.
    const read = await api.get<Loose>(`/api/prompts/${greeterId}`, {
      token: owner,
      query: { versionId: greeterV1, partials: "true" },
    });
    expect(read.status, read.text).toBe(200);
    expect(read.body.version.includes).toHaveLength(2);
    expect(read.body.partials).toEqual([
      { name: tone, label: "production", promptId: toneId, versionId: toneV1, version: 1, template: "Be {{mood}}." },
      { name: tone, label: "staging", promptId: toneId, versionId: toneV2, version: 2, template: "Be very {{mood}}." },
    ]);
    expect(read.body.unresolvedPartial).toBeUndefined();
    // Without the flag, and in lists, the prompt carries no partials.
    const plain = await api.get<Loose>(`/api/prompts/${greeterId}`, { token: owner, query: { versionId: greeterV1 } });
    expect(plain.body.partials).toBeUndefined();
  });

  it("sees a label move and a publish of the included prompt in the very next run", async () => {
    const vars = { versionId: greeterV1, variables: { name: "Bo", mood: "bold" } };
    expect(await textOf(greeterId, vars)).toBe("Hello Bo.\nBe bold.\n\nSign: Be very bold. Be bold.");
    expect((await setLabel(toneId, "staging", toneV1)).status).toBe(200);
    expect(await textOf(greeterId, vars)).toBe("Hello Bo.\nBe bold.\n\nSign: Be bold. Be bold.");
    const v3 = await created(toneId, {
      messages: [
        { role: "system", content: "Stay {{mood}}." },
        { role: "placeholder", name: "history" },
        { role: "developer", content: "Mind {{name}}." },
      ],
      variablesSchema: MOOD,
    });
    expect((await publish(toneId, v3)).status).toBe(200);
    // A chat version is included as its text messages joined by a blank line.
    expect(await textOf(greeterId, vars)).toBe(
      "Hello Bo.\nStay bold.\n\nMind Bo.\n\nSign: Be bold. Stay bold.\n\nMind Bo.",
    );
    // production moved back to v1 (a published version made live again): seen at once too.
    expect((await setLabel(toneId, "production", toneV1)).status).toBe(200);
    expect(await textOf(greeterId, vars)).toBe("Hello Bo.\nBe bold.\n\nSign: Be bold. Be bold.");
  });

  it("refuses a cycle where it would be made, naming it: creating, publishing, moving a label", async () => {
    // greeter's live version includes tone: tone may not include greeter.
    expect((await publish(greeterId, greeterV1)).status).toBe(200);
    expectCycle(
      await version(toneId, { systemPrompt: "Be {{mood}}.", developerPrompt: "{{> greeter}}", variablesSchema: MOOD }),
      `${tone} -> greeter -> ${tone}`,
      "developerPrompt",
    );
    // Itself, at any label.
    const self = await createPrompt("self");
    expectCycle(await version(self, { systemPrompt: "x {{> self@staging}}" }), "self -> self@staging", "systemPrompt");

    // A version made while its include stood for nothing, which later would close a cycle.
    const a = await createPrompt("loop-a");
    const b = await createPrompt("loop-b");
    const b1 = await created(b, { systemPrompt: "B" });
    expect((await publish(b, b1)).status).toBe(200);
    const a1 = await created(a, { systemPrompt: "A {{> loop-b}}" });
    const b2 = await created(b, { systemPrompt: "B {{> loop-a@staging}}" });
    expect((await setLabel(a, "staging", a1)).status).toBe(200);
    expectCycle(await publish(b, b2), "loop-b -> loop-a@staging -> loop-b", "versionId");
    expectCycle(await setLabel(b, "production", b2), "loop-b -> loop-a@staging -> loop-b", "versionId");
    expectCycle(await setLabel(b, "beta", b2), "loop-b -> loop-a@staging -> loop-b", "versionId");
    // Nothing moved: loop-b still runs its first version.
    expect((await api.get<Loose>(`/api/prompts/${b}`, { token: owner })).body.publishedVersionId).toBe(b1);
    expect(await textOf(a, { versionId: a1 })).toBe("A B");
  });

  it("refuses includes nested deeper than 5", async () => {
    // p1 includes p2 … p5 includes p6: five levels below p1.
    let below = "";
    for (let i = 6; i >= 1; i--) {
      const id = await createPrompt(`p${i}`);
      const v = await created(id, { systemPrompt: `${i}${below}` });
      expect((await publish(id, v)).status).toBe(200);
      below = ` {{> p${i}}}`;
    }
    const top = await createPrompt("top");
    const r = await version(top, { systemPrompt: "0 {{> p1}}" });
    expect(r.status, r.text).toBe(400);
    expect(r.body.error.message).toBe("the includes nest deeper than 5: top -> p1 -> p2 -> p3 -> p4 -> p5 -> p6");
    expect(r.body.error.details).toEqual([
      { field: "systemPrompt", issue: "nests includes deeper than 5: top -> p1 -> p2 -> p3 -> p4 -> p5 -> p6" },
    ]);
    const ok = await created(top, { systemPrompt: "1 {{> p2}}" });
    expect(await textOf(top, { versionId: ok })).toBe("1 2 3 4 5 6");
  });

  it("renders the includes in MCP prompts/get, as a run does", async () => {
    const key = await api.createApiKey(owner, org, ["prompts:read"]);
    const client = new Client({ name: "kiln-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${running.base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key.key}` } },
      }),
    );
    try {
      const got = await client.getPrompt({ name: "greeter", arguments: { name: "Cy", mood: "glad" } });
      expect(got.messages.map((m) => (m.content as { text: string }).text)).toEqual([
        "Hello Cy.\nBe glad.",
        "Sign: Be glad. Be glad.",
      ]);
    } finally {
      await client.close();
    }
  });

  it("renders a skill step's includes as its prompt's run does", async () => {
    const skill = await api.createSkill(owner, org, { name: "greets" });
    await api.replaceSkillPrompts(owner, skill.draftVersionId ?? "", [
      { promptId: greeterId, promptVersionId: greeterV1, alias: "greet" },
    ]);
    await api.publishSkill(owner, skill.id);
    const r = await api.post<Loose>(
      `/api/skills/${skill.id}/run`,
      { organizationId: org, input: { name: "Di", mood: "warm" } },
      { token: owner },
    );
    expect(r.status, r.text).toBe(201);
    expect(r.body.status, r.text).toBe("succeeded");
    expect(r.body.output.text).toBe("Hello Di.\nBe warm.\n\nSign: Be warm. Be warm.");
  });

  it("stores a run whose include does not resolve as a failed run naming it (unresolved_partial)", async () => {
    // Another organization's prompt of the name is never included.
    const outsider = (await api.signUp()).accessToken;
    const outsiderOrg = (await api.onboard(outsider)).organization.id;
    await api.createPublishedPrompt(outsider, outsiderOrg, { systemPrompt: "SECRET" }, { name: "elsewhere" });

    const orphan = await createPrompt("orphan");
    const failed = async (template: string, message: string) => {
      const v = await created(orphan, { systemPrompt: template });
      const r = await run(orphan, { versionId: v });
      expect(r.status, r.text).toBe(201);
      expect(r.body).toMatchObject({ status: "failed", output: null, error: { code: "unresolved_partial", message } });
      expect(r.body.usage).toMatchObject({ inputTokens: 0, outputTokens: 0 });
      const stored = await api.get<Loose>(`/api/runs/${r.body.id}`, { token: owner });
      expect(stored.status, stored.text).toBe(200);
      expect(stored.body).toMatchObject({ status: "failed", error: { code: "unresolved_partial" } });
      return v;
    };
    await failed("x {{> elsewhere}}", 'the partial {{> elsewhere}} does not resolve: no prompt is named "elsewhere"');
    await failed(
      `x {{> ${tone}@nope}}`,
      `the partial {{> ${tone}@nope}} does not resolve: the prompt "${tone}" has no label "nope"`,
    );
    const drafts = await createPrompt("drafts-only");
    await created(drafts, { systemPrompt: "never published" });
    const v = await failed(
      "x {{> drafts-only}}",
      'the partial {{> drafts-only}} does not resolve: the prompt "drafts-only" has no published version (its production label)',
    );
    const read = await api.get<Loose>(`/api/prompts/${orphan}`, {
      token: owner,
      query: { versionId: v, partials: "true" },
    });
    expect(read.body.partials).toEqual([]);
    expect(read.body.unresolvedPartial).toEqual({
      reference: "drafts-only",
      message: expect.stringContaining("has no published version"),
    });
    // Once it resolves, the next run renders it (drafts-only@latest stands for its draft).
    const latest = await created(orphan, { systemPrompt: "x {{> drafts-only@latest}}" });
    expect(await textOf(orphan, { versionId: latest })).toBe("x never published");
  });
});
