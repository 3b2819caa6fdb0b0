/**
 * The OpenAI-compatible endpoint (docs/openai-compatible.md): `POST /v1/chat/completions` runs a
 * Kiln prompt or skill through the execution service's normal run path (a stored run like any
 * other) and answers in the Chat Completions shape; `GET /v1/models` lists what can be called.
 * Errors leave in OpenAI's error shape (`openAiErrorOf`). Outside /api, not in the OpenAPI document.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { jsonText } from "@kiln/kit/json-text";
import type { Run } from "@kiln/proto/execution";
import type { FastifyRequest } from "fastify";
import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { everyPage } from "../http/list-page.js";
import { principalOf, rpcOptions } from "../http/request.js";
import { securityHeadersOf } from "../security-headers.js";
import { badRequest, modelNotFound, OpenAiHttpError } from "./openai-errors.js";
import { DEFAULT_LABEL, parseModel } from "./openai-model-ref.js";

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  variables?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
  tools?: unknown;
  tool_choice?: unknown;
  response_format?: unknown;
}

const seconds = (t: { seconds: bigint } | undefined) => (t ? Number(t.seconds) : Math.floor(Date.now() / 1000));

/** POST /v1/chat/completions and GET /v1/models. */
export function registerOpenAiRoutes(app: GatewayApp, deps: GatewayDeps): void {
  const { catalog, execution } = deps.clients;

  const allPrompts = (request: FastifyRequest, organizationId: string) =>
    everyPage(async (cursor) => {
      const page = await catalog.listPrompts({ organizationId, limit: 100, cursor }, rpcOptions(request));
      return { items: page.prompts, nextCursor: page.nextCursor };
    });

  const allSkills = (request: FastifyRequest, organizationId: string) =>
    everyPage(async (cursor) => {
      const page = await catalog.listSkills({ organizationId, limit: 100, cursor }, rpcOptions(request));
      return { items: page.skills, nextCursor: page.nextCursor };
    });

  /** The organization of the API key (or the `organization` an access token's caller names). */
  function organizationOfCaller(request: FastifyRequest): string {
    const principal = principalOf(request);
    if (principal.type === "api_key") return principal.organizationId;
    const given = request.headers["openai-organization"];
    if (typeof given === "string" && given) return given;
    throw badRequest("an access token must name the organization in the OpenAI-Organization header", null);
  }

  app.get("/v1/models", { schema: { hide: true } }, async (request) => {
    const organizationId = organizationOfCaller(request);
    // What the key may not read (prompts:read, skills:read) is left out rather than refused.
    const readable = <T>(list: Promise<T[]>) =>
      list.catch((e: unknown) => {
        if (e instanceof ConnectError && e.code === Code.PermissionDenied) return [] as T[];
        throw e;
      });
    const [prompts, skills] = await Promise.all([
      readable(allPrompts(request, organizationId)),
      readable(allSkills(request, organizationId)),
    ]);
    // Published prompts and skills, each a model named by its id.
    const modelsOf = (
      items: { id: string; name: string; publishedVersionId?: string; createdAt?: { seconds: bigint } }[],
      prefix: string,
    ) =>
      items
        .filter((i) => i.publishedVersionId)
        .map((i) => ({
          id: `${prefix}${i.id}`,
          object: "model",
          created: seconds(i.createdAt),
          owned_by: organizationId,
          name: i.name,
        }));
    const data = [...modelsOf(prompts, "kiln/"), ...modelsOf(skills, "kiln/skill/")];
    return { object: "list", data };
  });

  app.post("/v1/chat/completions", { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as ChatBody;
    if (typeof body.model !== "string" || body.model === "")
      throw badRequest("you must provide a model parameter", "model");
    const model = body.model;
    if (!Array.isArray(body.messages)) throw badRequest("messages must be an array", "messages");
    const variables = body.variables ?? {};
    if (typeof variables !== "object" || variables === null || Array.isArray(variables)) {
      throw badRequest("variables must be an object", "variables");
    }
    // The caller's user/assistant turns go after the prompt's own messages (text content only).
    const messages = (body.messages as ChatMessage[]).map((m, i) => {
      const content = Array.isArray(m?.content)
        ? (m.content as { type?: unknown; text?: unknown }[])
            .map((part) => {
              if (part?.type !== "text" || typeof part.text !== "string") {
                throw badRequest("only text content parts are supported", `messages[${i}].content`);
              }
              return part.text;
            })
            .join("")
        : m?.content;
      if (m?.role !== "user" && m?.role !== "assistant") {
        throw badRequest(
          "only user and assistant messages are supported: the prompt's system and developer messages come first",
          `messages[${i}].role`,
        );
      }
      if (typeof content !== "string") throw badRequest("a message needs text content", `messages[${i}].content`);
      return { role: m.role, content };
    });
    if (Array.isArray(body.tools) && body.tools.length > 0) {
      throw badRequest("caller-supplied tools are not supported: attach tools to the Kiln prompt", "tools");
    }
    const parsed = parseModel(model);
    if (!parsed)
      throw modelNotFound(model, "is not a Kiln model (kiln/<prompt>[@label] or kiln/skill/<skill>[@label])");
    // Without @label: the published version, as a run without a label. With one: that label's
    // version; a label the prompt or skill does not have is an unknown model.
    const label = parsed.label === DEFAULT_LABEL ? "" : parsed.label;
    const labelled = async <T>(call: () => Promise<T>): Promise<T> => {
      try {
        return await call();
      } catch (e) {
        if (label !== "" && e instanceof ConnectError && e.code === Code.NotFound && e.rawMessage.startsWith("label "))
          throw modelNotFound(model, `has no label "${label}"`);
        throw e;
      }
    };

    const organizationId = organizationOfCaller(request);
    let run: Run | undefined;
    if (parsed.kind === "prompt") {
      const prompts = await allPrompts(request, organizationId);
      const prompt = prompts.find((p) => p.id === parsed.ref) ?? prompts.find((p) => p.name === parsed.ref);
      if (!prompt || (label === "" && !prompt.publishedVersionId)) throw modelNotFound(model);
      run = await labelled(
        async () =>
          (
            await execution.runPrompt(
              {
                organizationId,
                promptId: prompt.id,
                variables: jsonText(variables),
                messages,
                label,
              },
              rpcOptions(request),
            )
          ).run,
      );
    } else {
      const skills = await allSkills(request, organizationId);
      const skill = skills.find((s) => s.id === parsed.ref) ?? skills.find((s) => s.name === parsed.ref);
      if (!skill || (label === "" && !skill.publishedVersionId)) throw modelNotFound(model);
      if (messages.length > 0) {
        throw badRequest("a skill takes its input in `variables` only: send `messages: []`", "messages");
      }
      run = await labelled(
        async () =>
          (
            await execution.runSkill(
              { organizationId, skillId: skill.id, input: jsonText(variables), label },
              rpcOptions(request),
            )
          ).run,
      );
    }
    if (!run) throw new Error("execution returned no run");
    reply.header("x-kiln-run-id", run.id);
    if (run.status !== "succeeded" || run.output === undefined) {
      const status = run.error?.code === "provider_timeout" ? 504 : 502;
      throw new OpenAiHttpError(status, {
        error: {
          message: `run ${run.id} failed: ${run.error?.message ?? "no output"}`,
          type: "api_error",
          param: null,
          code: run.error?.code ?? null,
        },
      });
    }
    const output = JSON.parse(run.output.json) as { text: string; json?: unknown };
    const content = output.json !== undefined ? JSON.stringify(output.json) : output.text;
    const created = seconds(run.createdAt);
    const usage = {
      prompt_tokens: Number(run.usage?.inputTokens ?? 0n),
      completion_tokens: Number(run.usage?.outputTokens ?? 0n),
      total_tokens: Number(run.usage?.inputTokens ?? 0n) + Number(run.usage?.outputTokens ?? 0n),
    };

    if (body.stream === true) {
      // The run completed whole (execution does not stream); its output leaves in chunks.
      const includeUsage = body.stream_options?.include_usage === true;
      const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
        id: run.id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...(includeUsage ? { usage: null } : {}),
      });
      const events: unknown[] = [chunk({ role: "assistant", content: "" }, null)];
      for (const piece of content.match(/[\s\S]{1,16}/g) ?? []) events.push(chunk({ content: piece }, null));
      events.push(chunk({}, "stop"));
      if (includeUsage)
        events.push({ id: run.id, object: "chat.completion.chunk", created, model, choices: [], usage });
      reply.hijack();
      // Hijacked: the onSend hook never sees this answer, so it carries the headers itself.
      reply.raw.writeHead(200, {
        ...securityHeadersOf("text/event-stream"),
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "x-request-id": request.id,
        "x-kiln-run-id": run.id,
      });
      for (const event of events) reply.raw.write(`data: ${JSON.stringify(event)}\n\n`);
      reply.raw.end("data: [DONE]\n\n");
      return reply;
    }

    return {
      id: run.id,
      object: "chat.completion",
      created,
      model,
      choices: [
        { index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" },
      ],
      usage,
    };
  });
}

// The error mapping and the model-name parser, where their tests import them from.
