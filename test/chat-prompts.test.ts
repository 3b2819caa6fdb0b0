/**
 * Chat prompts over real HTTP (issue #50, api.md "Chat prompts"), in both run modes: a version made
 * of messages (few-shot user/assistant turns and a placeholder), run with the caller's messages
 * (the exact messages the OpenAI stub received), variables rendered in every message, a
 * placeholder filled by a variable, 400s naming the field for bad shapes, a text version read as
 * messages, the diff of two versions' messages, an export → import round trip, and
 * `/v1/chat/completions` with a prompt as the model filling the placeholder.
 */
import { loadProvidersConfig } from "@kiln/execution/config";
import { type OpenAIStub, startOpenAIStub, stubReply } from "@kiln/testing/openai-stub";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";

type Message = { role: string; content?: string; name?: string };
interface VersionView {
  id: string;
  version: number;
  messages: Message[];
  chat: boolean;
  systemPrompt: string;
  developerPrompt: string | null;
}
interface ErrorBody {
  error: { code: string; details: { field: string; issue: string }[] };
}

const env = (stub: OpenAIStub) => ({
  OPENAI_COMPATIBLE_PROVIDERS: JSON.stringify([
    { id: "stub", baseUrl: stub.baseUrl, models: [{ model: "m", inputPerMTokUsd: 0, outputPerMTokUsd: 0 }] },
  ]),
});

const SCHEMA = {
  type: "object",
  properties: { persona: { type: "string" }, word: { type: "string" } },
  required: ["persona", "word"],
};
const TEMPLATE: Message[] = [
  { role: "system", content: "You are {{persona}}." },
  { role: "user", content: "Translate cat." },
  { role: "assistant", content: "Katze ({{persona}})" },
  { role: "placeholder", name: "history" },
  { role: "user", content: "Translate {{word}}." },
];
const rendered = (persona: string, word: string, history: Message[]) => [
  { role: "system", content: `You are ${persona}.` },
  { role: "user", content: "Translate cat." },
  { role: "assistant", content: `Katze (${persona})` },
  ...history,
  { role: "user", content: `Translate ${word}.` },
];

/** What the stub was last sent, as role and content. */
const lastSent = (stub: OpenAIStub) =>
  ((stub.requests.at(-1)?.body as { messages?: Message[] } | undefined)?.messages ?? []).map((m) => ({
    role: m.role,
    content: m.content,
  }));

async function scenario(api: TestClient, stub: OpenAIStub) {
  const { accessToken: token } = await api.signUp();
  const { organization } = await api.onboard(token);
  const org = organization.id;
  const prompt = await api.createPrompt(token, org, { name: `translator-${Date.now()}` });
  const versions = `/api/prompts/${prompt.id}/versions`;
  const create = (body: Record<string, unknown>) => api.post<VersionView & ErrorBody>(versions, body, { token });

  // A chat version answers its messages as given.
  const v1 = await create({ messages: TEMPLATE, variablesSchema: SCHEMA, model: "stub/m" });
  expect(v1.status, v1.text).toBe(201);
  expect(v1.body).toMatchObject({ messages: TEMPLATE, chat: true, systemPrompt: "", developerPrompt: null });

  // A run's messages fill the placeholder; variables render in every message.
  const run = (body: Record<string, unknown>) =>
    api.post<{ status: string; error?: unknown }>(
      `/api/prompts/${prompt.id}/run`,
      { organizationId: org, versionId: v1.body.id, variables: { persona: "a linguist", word: "dog" }, ...body },
      { token },
    );
  const history = [
    { role: "user", content: "Translate bird." },
    { role: "assistant", content: "Vogel" },
  ];
  const ran = await run({ messages: history });
  expect(ran.status, ran.text).toBe(201);
  expect(lastSent(stub)).toEqual(rendered("a linguist", "dog", history));
  // No caller messages: the placeholder is empty.
  expect((await run({})).status).toBe(201);
  expect(lastSent(stub)).toEqual(rendered("a linguist", "dog", []));
  // A variable holding a conversation fills the placeholder of its name; the caller's then follow.
  const named = await run({
    variables: { persona: "p", word: "w", history: [{ role: "user", content: "from a variable" }] },
    messages: [{ role: "user", content: "last" }],
  });
  expect(named.status, named.text).toBe(201);
  expect(lastSent(stub)).toEqual([
    ...rendered("p", "w", [{ role: "user", content: "from a variable" }]),
    { role: "user", content: "last" },
  ]);

  // Bad shapes are 400 naming the field.
  const refused = async (body: Record<string, unknown>, field: string, issue: RegExp) => {
    const r = await create({ variablesSchema: SCHEMA, ...body });
    expect(r.status, r.text).toBe(400);
    expect(r.body.error.code).toBe("invalid_argument");
    expect(r.body.error.details).toContainEqual({ field, issue: expect.stringMatching(issue) });
  };
  await refused({ messages: TEMPLATE, systemPrompt: "Hi." }, "systemPrompt", /cannot be given with messages/);
  await refused({ messages: TEMPLATE, developerPrompt: "Hi." }, "developerPrompt", /cannot be given with messages/);
  await refused({ messages: [{ role: "robot", content: "x" }] }, "messages[0].role", /must be system, developer/);
  await refused(
    { messages: [...TEMPLATE, { role: "placeholder", name: "history" }] },
    "messages[5].name",
    /repeats the placeholder "history"/,
  );
  await refused({ messages: [{ role: "placeholder", name: "1x" }] }, "messages[0].name", /letters, digits/);
  await refused({ messages: [{ role: "placeholder", name: "h", content: "x" }] }, "messages[0].content", /filled at/);
  await refused({ messages: [{ role: "user", name: "h", content: "x" }] }, "messages[0].name", /only a field of/);
  await refused({ messages: [{ role: "user", content: "" }] }, "messages[0].content", /is required/);
  await refused({ messages: [{ role: "user", content: "{{city}}" }] }, "messages[0].content", /declares no variable/);
  await refused({}, "systemPrompt", /is required/);
  const empty = await create({ messages: [] });
  expect(empty.status, empty.text).toBe(400);

  // A text version reads as messages too, built from its system and developer prompts.
  const v2 = await create({
    systemPrompt: "You are {{persona}}.",
    developerPrompt: "Be brief.",
    variablesSchema: SCHEMA,
  });
  expect(v2.status, v2.text).toBe(201);
  expect(v2.body).toMatchObject({
    chat: false,
    systemPrompt: "You are {{persona}}.",
    messages: [
      { role: "system", content: "You are {{persona}}." },
      { role: "developer", content: "Be brief." },
    ],
  });

  // The diff of two chat versions names the message that changed.
  const changed = TEMPLATE.map((m, i) => (i === 2 ? { role: "assistant", content: "Die Katze" } : m));
  const v3 = await create({ messages: changed, variablesSchema: SCHEMA, model: "stub/m" });
  const diff = await api.get<{ changes: { op: string; path: string; before?: unknown; after?: unknown }[] }>(
    `${versions}/${v3.body.id}/diff`,
    { token, query: { against: v1.body.id } },
  );
  expect(diff.status, diff.text).toBe(200);
  expect(diff.body.changes).toEqual([
    { op: "replace", path: "/messages/2/content", before: "Katze ({{persona}})", after: "Die Katze" },
  ]);
  // Against the text version before it: the messages it was built from differ.
  const fromText = await api.get<{ changes: { path: string }[] }>(`${versions}/${v3.body.id}/diff`, { token });
  expect(fromText.body.changes.map((c) => c.path)).toContain("/messages/1/content");

  // /v1/chat/completions with the prompt as its model: the request's messages fill the placeholder.
  await api.publishPrompt(token, prompt.id, v1.body.id);
  const compat = await api.post<{ choices: { message: { content: string } }[] }>(
    "/v1/chat/completions",
    {
      model: `kiln/${prompt.id}`,
      messages: [{ role: "user", content: "compatible turn" }],
      metadata: { variables: JSON.stringify({ persona: "a poet", word: "sun" }) },
    },
    { token, headers: { "openai-organization": org } },
  );
  expect(compat.status, compat.text).toBe(200);
  expect(lastSent(stub)).toEqual(rendered("a poet", "sun", [{ role: "user", content: "compatible turn" }]));

  // Export → import keeps the messages of every version.
  const exported = await api.get<{ prompts: { id: string; versions: { messages?: Message[] }[] }[] }>(
    `/api/organizations/${org}/export`,
    { token },
  );
  expect(exported.status, exported.text).toBe(200);
  const bundled = exported.body.prompts.find((p) => p.id === prompt.id);
  expect(bundled?.versions.map((v) => v.messages)).toEqual([TEMPLATE, undefined, changed]);
  const { accessToken: importer } = await api.signUp();
  const { organization: other } = await api.onboard(importer);
  const imported = await api.post(`/api/organizations/${other.id}/import`, exported.body, { token: importer });
  expect(imported.status, imported.text).toBe(200);
  const list = await api.get<{ data: { id: string; name: string }[] }>("/api/prompts", {
    token: importer,
    query: { organizationId: other.id },
  });
  const copy = list.body.data.find((p) => p.name === prompt.name);
  const read = await api.get<{ versions: { id: string; version: number }[] }>(`/api/prompts/${copy?.id}`, {
    token: importer,
  });
  const copies = await Promise.all(
    read.body.versions.map((v) =>
      api.get<{ version: VersionView }>(`/api/prompts/${copy?.id}`, { token: importer, query: { versionId: v.id } }),
    ),
  );
  expect(copies.map((c) => [c.body.version.chat, c.body.version.messages])).toEqual([
    [true, TEMPLATE],
    [false, v2.body.messages],
    [true, changed],
  ]);
}

describe("chat prompts in the embedded mode", () => {
  let stub: OpenAIStub;
  let kiln: Awaited<ReturnType<typeof startEmbedded>>["kiln"];
  let api: TestClient;

  beforeAll(async () => {
    stub = await startOpenAIStub({ respond: () => stubReply.text("ok") });
    const started = await startEmbedded({ providers: loadProvidersConfig(env(stub)) });
    kiln = started.kiln;
    api = createTestClient(started.baseUrl);
  });

  afterAll(async () => {
    await kiln?.close();
    await stub?.close();
  });

  it("runs a chat version with few-shot turns and a placeholder; 400s, diff, export/import, /v1", async () => {
    await scenario(api, stub);
  }, 60_000);
});

describe("chat prompts in the distributed mode", () => {
  let stub: OpenAIStub;
  let kiln: Awaited<ReturnType<typeof startDistributed>>;
  let api: TestClient;

  beforeAll(async () => {
    stub = await startOpenAIStub({ respond: () => stubReply.text("ok") });
    kiln = await startDistributed({
      mongoUrl: inject("mongoUrl"),
      natsUrl: inject("natsUrl"),
      envOf: { execution: env(stub) },
    });
    api = createTestClient(kiln.gatewayUrl);
  }, 120_000);

  afterAll(async () => {
    await kiln?.stop();
    await stub?.close();
  });

  it("runs a chat version with few-shot turns and a placeholder; 400s, diff, export/import, /v1", async () => {
    await scenario(api, stub);
  }, 120_000);
});
