/**
 * A fake of the prompt routes `prompts.resolve` uses, as a `fetch` for `new Kiln({ fetch })`:
 * `GET /api/prompts` (paged), `GET /api/prompts/:id[?versionId=]`, `GET /api/prompts/:id/labels`.
 * It records every request and can be switched to fail as an unreachable or overloaded server.
 */
import type { Label, Prompt, PromptVersion } from "../src/resources.js";

export interface FakePrompt {
  id: string;
  name: string;
  versions: PromptVersion[];
  publishedVersionId: string | null;
  labels: Record<string, string>;
  updatedAt: string;
}

let counter = 0;
const hex = () => (counter++).toString(16).padStart(32, "0");

export function fakeVersion(promptId: string, version: number, fields: Partial<PromptVersion> = {}): PromptVersion {
  // As the platform answers: `messages` always, built from the system and developer prompts.
  const systemPrompt = fields.systemPrompt ?? `v${version}`;
  const built: PromptVersion["messages"] = [{ role: "system", content: systemPrompt }];
  if (fields.developerPrompt) built.push({ role: "developer", content: fields.developerPrompt });
  return {
    messages: built,
    chat: false,
    id: `pv_${hex()}`,
    promptId,
    organizationId: "org_1",
    version,
    status: "draft",
    systemPrompt: `v${version}`,
    developerPrompt: null,
    variablesSchema: { type: "object" },
    responseFormat: { type: "text" },
    temperature: null,
    maxOutputTokens: null,
    cacheTtlSeconds: null,
    model: null,
    tools: [],
    includes: [],
    createdAt: "2026-11-27T00:00:00.000Z",
    publishedAt: null,
    createdBy: { type: "user", id: "usr_1" },
    message: null,
    ...fields,
  };
}

/** A prompt with `count` versions (systemPrompt "v1", "v2", …), the `published` one published. */
export function fakePrompt(name: string, count: number, published: number | null): FakePrompt {
  const id = `prm_${hex()}`;
  const versions = Array.from({ length: count }, (_, i) => fakeVersion(id, i + 1));
  const publishedVersionId = published === null ? null : (versions[published - 1]?.id ?? null);
  return { id, name, versions, publishedVersionId, labels: {}, updatedAt: "2026-11-27T00:00:00.000Z" };
}

function promptOf(p: FakePrompt, versionId: string | null): Prompt {
  const version =
    versionId === null
      ? (p.versions.find((v) => v.id === p.publishedVersionId) ?? p.versions.at(-1) ?? null)
      : (p.versions.find((v) => v.id === versionId) ?? null);
  return {
    id: p.id,
    organizationId: "org_1",
    name: p.name,
    description: "",
    defaultModel: null,
    publishedVersionId: p.publishedVersionId,
    latestVersion: p.versions.length,
    versions: p.versions.map((v) => ({
      id: v.id,
      version: v.version,
      status: v.id === p.publishedVersionId ? "published" : "draft",
      createdAt: v.createdAt,
      publishedAt: null,
      createdBy: v.createdBy,
      message: v.message,
    })),
    version,
    createdAt: "2026-11-27T00:00:00.000Z",
    updatedAt: p.updatedAt,
  };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const envelope = (status: number, code: string, message: string) =>
  json(status, { error: { code, message, details: [], requestId: "req_fake" } });

export interface FakePromptApi {
  prompts: FakePrompt[];
  /** Every request, as `path?query`. */
  requests: string[];
  /** "down": fetch throws as on a refused connection; "overloaded": 503. */
  mode: "up" | "down" | "overloaded";
  fetch: (request: Request) => Promise<Response>;
}

export function fakePromptApi(prompts: FakePrompt[]): FakePromptApi {
  const api: FakePromptApi = {
    prompts,
    requests: [],
    mode: "up",
    async fetch(request) {
      const url = new URL(request.url);
      api.requests.push(`${url.pathname}${url.search}`);
      if (api.mode === "down") throw new TypeError("fetch failed");
      if (api.mode === "overloaded") return envelope(503, "unavailable", "overloaded");
      const [, , family, id, sub] = url.pathname.split("/");
      if (request.method !== "GET" || family !== "prompts") return envelope(404, "not_found", "no route");
      if (id === undefined) {
        const limit = Number(url.searchParams.get("limit") ?? 50);
        const from = Number(url.searchParams.get("cursor") ?? 0);
        const page = api.prompts.slice(from, from + limit);
        const next = from + limit < api.prompts.length ? String(from + limit) : null;
        return json(200, { data: page.map((p) => promptOf(p, null)), nextCursor: next });
      }
      const prompt = api.prompts.find((p) => p.id === id);
      if (!prompt) return envelope(404, "not_found", `prompt ${id} not found`);
      if (sub === "labels") {
        const labels: Label[] = Object.entries(prompt.labels).map(([label, versionId]) => ({
          label,
          versionId,
          version: prompt.versions.find((v) => v.id === versionId)?.version ?? 0,
          updatedAt: prompt.updatedAt,
          updatedBy: null,
          readOnly: false,
          protected: false,
          cacheTtlSeconds: null,
        }));
        return json(200, { data: labels, nextCursor: null });
      }
      const versionId = url.searchParams.get("versionId");
      const answer = promptOf(prompt, versionId);
      if (versionId !== null && answer.version === null) return envelope(404, "not_found", "version not found");
      return json(200, answer);
    },
  };
  return api;
}
