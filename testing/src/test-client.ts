/**
 * A small REST client for tests: the same calls against `app.inject()` (no socket) or a real base
 * URL (fetch), answering `{ status, headers, body }`, plus the identity flow of api.md
 * ("Authentication", "Identity") as helpers. Not a test itself; the end-to-end suites reuse it.
 */
import { randomUUID } from "node:crypto";
import type { FastifyInstance, HTTPMethods } from "fastify";
import type {
  CreatedApiKey,
  EvaluationCase,
  EvaluationRun,
  EvaluationStarted,
  EvaluationTargetLabel,
  List,
  NewEvaluationCase,
  OnboardingResult,
  Prompt,
  PromptStepInput,
  PromptVersion,
  PromptVersionInput,
  SignedUp,
  SignUpResult,
  Skill,
  TokenResult,
  Tool,
} from "./api-types.js";

export type * from "./api-types.js";

export type Method = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/** Anything with Fastify's `inject()`: the gateway app itself. */
export type Injectable = Pick<FastifyInstance, "inject">;

export interface RequestOptions {
  /** Sent as JSON with `Content-Type: application/json` (unless `headers` says otherwise). */
  body?: unknown;
  /** Sent as it is, without a default Content-Type: for malformed or non-JSON bodies. */
  rawBody?: string | Buffer;
  /** `Authorization: Bearer <token>`: an access token or an API key. */
  token?: string;
  /** `X-API-Key: <key>`. */
  apiKey?: string;
  query?: Record<string, string | number | undefined>;
  /** Extra headers; they win over the ones the options above set. */
  headers?: Record<string, string>;
}

export interface TestResponse<T = unknown> {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Parsed JSON when the response is JSON, else the text (undefined when empty). */
  body: T;
  text: string;
}

export const TEST_PASSWORD = "correct-horse-battery-staple";

export interface TestClient {
  request<T = unknown>(method: Method, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  get<T = unknown>(path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  post<T = unknown>(path: string, body?: unknown, options?: RequestOptions): Promise<TestResponse<T>>;
  patch<T = unknown>(path: string, body?: unknown, options?: RequestOptions): Promise<TestResponse<T>>;
  put<T = unknown>(path: string, body?: unknown, options?: RequestOptions): Promise<TestResponse<T>>;
  delete<T = unknown>(path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  /** POST /api/auth/signup with a fresh address unless one is given; throws unless 201. */
  signUp(email?: string, options?: { password?: string; fullName?: string }): Promise<SignedUp>;
  /** POST /api/auth/token; throws unless 200. */
  token(email: string, password?: string): Promise<TokenResult>;
  /** POST /api/onboarding/complete; throws unless 201 (first time) or 200 (repeat). */
  onboard(token: string, organizationName?: string): Promise<OnboardingResult & { status: 200 | 201 }>;
  /** POST /api/api-keys; throws unless 201. */
  createApiKey(token: string, organizationId: string, scopes: string[], name?: string): Promise<CreatedApiKey>;
  /**
   * Catalog helpers (api.md "Prompts", "Tools", "Skills"): `credential` is an access token or an
   * API key; each throws unless the documented status (201 for creates, 200 otherwise).
   */
  createPrompt(
    credential: string,
    organizationId: string,
    fields?: { name?: string; description?: string; defaultModel?: string | null },
  ): Promise<Prompt>;
  createPromptVersion(credential: string, promptId: string, input: PromptVersionInput): Promise<PromptVersion>;
  publishPrompt(credential: string, promptId: string, versionId: string): Promise<Prompt>;
  /** createPrompt, createPromptVersion and publishPrompt in one: the prompt as published. */
  createPublishedPrompt(
    credential: string,
    organizationId: string,
    input: PromptVersionInput,
    fields?: { name?: string; description?: string; defaultModel?: string | null },
  ): Promise<{ prompt: Prompt; version: PromptVersion }>;
  /** A manual_stub tool answering `result`, with a fresh toolKey unless one is given. */
  createTool(
    credential: string,
    organizationId: string,
    fields?: Partial<{
      toolKey: string;
      name: string;
      description: string;
      type: string;
      config: unknown;
      inputSchema: unknown;
    }>,
  ): Promise<Tool>;
  /** organizationId undefined: an API key's own organization. */
  createSkill(
    credential: string,
    organizationId: string | undefined,
    fields?: { name?: string; description?: string },
  ): Promise<Skill>;
  replaceSkillPrompts(credential: string, skillVersionId: string, prompts: PromptStepInput[]): Promise<Skill>;
  publishSkill(credential: string, skillId: string, versionId?: string): Promise<Skill>;
  /** An agent with `workflow` saved on its draft and published: its id. */
  createPublishedAgent(credential: string, organizationId: string, name: string, workflow: unknown): Promise<string>;
  /**
   * Evaluation helpers (api.md "Evaluations"): organizationId undefined means an API key's own
   * organization; each throws unless the documented status (201 create, 202 start, 200 read).
   */
  createEvaluationCases(
    credential: string,
    organizationId: string | undefined,
    skillId: string,
    cases: NewEvaluationCase[],
  ): Promise<EvaluationCase[]>;
  startEvaluation(
    credential: string,
    organizationId: string | undefined,
    skillId: string,
    options?: { targets?: EvaluationTargetLabel[]; caseIds?: string[]; repeats?: number },
  ): Promise<EvaluationStarted>;
  getEvaluation(credential: string, skillId: string, evaluationRunId: string): Promise<EvaluationRun>;
  /** Polls GET /api/skills/:id/evaluations/:evaluationRunId until completed or failed (default 30 s). */
  waitForEvaluation(
    credential: string,
    skillId: string,
    evaluationRunId: string,
    options?: { timeoutMs?: number; intervalMs?: number },
  ): Promise<EvaluationRun>;
}

interface RawRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  payload: string | Buffer | undefined;
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

type Send = (request: RawRequest) => Promise<RawResponse>;

function flattenHeaders(headers: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}

function sendWithInject(app: Injectable): Send {
  return async (r) => {
    const res = await app.inject({
      method: r.method as HTTPMethods,
      url: r.url,
      headers: r.headers,
      ...(r.payload === undefined ? {} : { payload: r.payload }),
    });
    return { status: res.statusCode, headers: flattenHeaders(res.headers), text: res.body };
  };
}

function sendWithFetch(baseUrl: string): Send {
  return async (r) => {
    const res = await fetch(new URL(r.url, baseUrl), {
      method: r.method,
      headers: r.headers,
      body: r.payload,
      redirect: "manual",
    });
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return { status: res.status, headers, text: await res.text() };
  };
}

function parseBody(headers: Record<string, string>, text: string): unknown {
  if (text === "") return undefined;
  if (!/\bjson\b/i.test(headers["content-type"] ?? "")) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function expectStatus(what: string, res: TestResponse, ...statuses: number[]): void {
  if (!statuses.includes(res.status)) {
    throw new Error(`${what}: expected ${statuses.join(" or ")}, got ${res.status}: ${res.text}`);
  }
}

/** A client for `app.inject()` (pass the Fastify app) or a running gateway (pass its base URL). */
export function createTestClient(target: string | URL | Injectable): TestClient {
  const send =
    typeof target === "string" || target instanceof URL ? sendWithFetch(String(target)) : sendWithInject(target);

  async function request<T = unknown>(
    method: Method,
    path: string,
    options: RequestOptions = {},
  ): Promise<TestResponse<T>> {
    const headers: Record<string, string> = {};
    let payload: string | Buffer | undefined;
    if (options.rawBody !== undefined) payload = options.rawBody;
    else if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey;
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    let url = path;
    const query = Object.entries(options.query ?? {}).filter((e): e is [string, string | number] => e[1] !== undefined);
    if (query.length > 0) {
      url +=
        (url.includes("?") ? "&" : "?") +
        new URLSearchParams(query.map(([k, v]): [string, string] => [k, String(v)])).toString();
    }
    const res = await send({ method, url, headers, payload });
    return { status: res.status, headers: res.headers, body: parseBody(res.headers, res.text) as T, text: res.text };
  }

  const client: TestClient = {
    request,
    get: (path, options) => request("GET", path, options),
    post: (path, body, options) => request("POST", path, { ...options, body }),
    patch: (path, body, options) => request("PATCH", path, { ...options, body }),
    put: (path, body, options) => request("PUT", path, { ...options, body }),
    delete: (path, options) => request("DELETE", path, options),

    async signUp(email = `user-${randomUUID()}@example.test`, options = {}) {
      const password = options.password ?? TEST_PASSWORD;
      const body = { email, password, ...(options.fullName === undefined ? {} : { fullName: options.fullName }) };
      const res = await client.post<SignUpResult>("/api/auth/signup", body);
      expectStatus("sign-up", res, 201);
      return { ...res.body, email, password };
    },

    async token(email, password = TEST_PASSWORD) {
      const res = await client.post<TokenResult>("/api/auth/token", { email, password });
      expectStatus("token", res, 200);
      return res.body;
    },

    async onboard(token, organizationName = `Org ${randomUUID().slice(0, 8)}`) {
      const res = await client.post<OnboardingResult>(
        "/api/onboarding/complete",
        { fullName: "Test User", organizationName },
        { token },
      );
      expectStatus("onboarding", res, 200, 201);
      return { ...res.body, status: res.status as 200 | 201 };
    },

    async createApiKey(token, organizationId, scopes, name = "test key") {
      const res = await client.post<CreatedApiKey>("/api/api-keys", { organizationId, name, scopes }, { token });
      expectStatus("API key creation", res, 201);
      return res.body;
    },

    async createPrompt(credential, organizationId, fields = {}) {
      const body = { organizationId, name: `Prompt ${randomUUID().slice(0, 8)}`, ...fields };
      const res = await client.post<Prompt>("/api/prompts", body, { token: credential });
      expectStatus("prompt creation", res, 201);
      return res.body;
    },

    async createPromptVersion(credential, promptId, input) {
      const res = await client.post<PromptVersion>(`/api/prompts/${promptId}/versions`, input, { token: credential });
      expectStatus("prompt version creation", res, 201);
      return res.body;
    },

    async publishPrompt(credential, promptId, versionId) {
      const res = await client.post<Prompt>(`/api/prompts/${promptId}/publish`, { versionId }, { token: credential });
      expectStatus("prompt publication", res, 200);
      return res.body;
    },

    async createPublishedPrompt(credential, organizationId, input, fields = {}) {
      const created = await client.createPrompt(credential, organizationId, fields);
      const version = await client.createPromptVersion(credential, created.id, input);
      const prompt = await client.publishPrompt(credential, created.id, version.id);
      const read = await client.get<Prompt>(`/api/prompts/${created.id}`, {
        token: credential,
        query: { versionId: version.id },
      });
      expectStatus("prompt read", read, 200);
      if (!read.body.version) throw new Error("the published prompt has no version");
      return { prompt, version: read.body.version };
    },

    async createTool(credential, organizationId, fields = {}) {
      const body = {
        organizationId,
        toolKey: `tool_${randomUUID().slice(0, 8)}`,
        name: "A tool",
        type: "manual_stub",
        config: { result: { ok: true } },
        inputSchema: { type: "object", properties: { city: { type: "string" } } },
        ...fields,
      };
      const res = await client.post<Tool>("/api/tools", body, { token: credential });
      expectStatus("tool creation", res, 201);
      return res.body;
    },

    async createSkill(credential, organizationId, fields = {}) {
      const body = {
        ...(organizationId === undefined ? {} : { organizationId }),
        name: `Skill ${randomUUID().slice(0, 8)}`,
        ...fields,
      };
      const res = await client.post<Skill>("/api/skills", body, { token: credential });
      expectStatus("skill creation", res, 201);
      return res.body;
    },

    async replaceSkillPrompts(credential, skillVersionId, prompts) {
      const res = await client.post<Skill>(
        `/api/skill-versions/${skillVersionId}/prompts`,
        { prompts },
        { token: credential },
      );
      expectStatus("replacePrompts", res, 200);
      return res.body;
    },

    async publishSkill(credential, skillId, versionId) {
      const res = await client.post<Skill>(
        `/api/skills/${skillId}/publish`,
        versionId === undefined ? {} : { versionId },
        { token: credential },
      );
      expectStatus("skill publication", res, 200);
      return res.body;
    },

    async createPublishedAgent(credential, organizationId, name, workflow) {
      const agent = await client.post<{ id: string; draftVersionId: string }>(
        "/api/agents",
        { organizationId, name },
        { token: credential },
      );
      expectStatus("agent creation", agent, 201);
      const saved = await client.request("PUT", `/api/agent-versions/${agent.body.draftVersionId}/workflow`, {
        token: credential,
        body: { workflow },
      });
      expectStatus("workflow save", saved, 200);
      expectStatus(
        "agent publication",
        await client.post(`/api/agents/${agent.body.id}/publish`, {}, { token: credential }),
        200,
      );
      return agent.body.id;
    },

    async createEvaluationCases(credential, organizationId, skillId, cases) {
      const res = await client.post<List<EvaluationCase>>(
        `/api/skills/${skillId}/evaluation-cases`,
        { ...(organizationId === undefined ? {} : { organizationId }), cases },
        { token: credential },
      );
      expectStatus("evaluation case creation", res, 201);
      return res.body.data;
    },

    async startEvaluation(credential, organizationId, skillId, options = {}) {
      const res = await client.post<EvaluationStarted>(
        `/api/skills/${skillId}/evaluations/run`,
        { ...(organizationId === undefined ? {} : { organizationId }), ...options },
        { token: credential },
      );
      expectStatus("evaluation start", res, 202);
      return res.body;
    },

    async getEvaluation(credential, skillId, evaluationRunId) {
      const res = await client.get<EvaluationRun>(`/api/skills/${skillId}/evaluations/${evaluationRunId}`, {
        token: credential,
      });
      expectStatus("evaluation read", res, 200);
      return res.body;
    },

    async waitForEvaluation(credential, skillId, evaluationRunId, options = {}) {
      const timeoutMs = options.timeoutMs ?? 30_000;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const run = await client.getEvaluation(credential, skillId, evaluationRunId);
        if (run.status === "completed" || run.status === "failed" || run.status === "cancelled") return run;
        if (Date.now() > deadline) {
          throw new Error(
            `evaluation ${evaluationRunId} still ${run.status} after ${timeoutMs} ms (${run.results.length} results)`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
      }
    },
  };
  return client;
}
