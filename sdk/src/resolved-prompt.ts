import { placeMessages } from "@kiln/contracts/prompt-messages";
import type { TemplateFiller, TemplateMessage } from "./prompt-render.js";
import type { Prompt, PromptVersion, ResponseFormat, ToolRef } from "./resources.js";

/** A chat message as the platform sends it to a model (and as a caller may append its own). */
export interface PromptMessage {
  role: "system" | "developer" | "user" | "assistant";
  content: string;
}

/** The response format as the platform sends it: a JSON schema always carries a name ("response" by default). */
export type RenderedResponseFormat =
  | { type: "text" }
  | { type: "json_schema"; name: string; schema: Record<string, unknown> };

/**
 * What a prompt version renders to: the messages the platform would send the model for a run
 * (system, then developer when the version has one, then the caller's), and the version's settings.
 * `model` is the version's (fixed at creation); null means the deployment's default model.
 */
export interface RenderedPrompt {
  messages: PromptMessage[];
  model: string | null;
  temperature: number | null;
  maxOutputTokens: number | null;
  responseFormat: RenderedResponseFormat;
  /** The tools the version selects (their definitions are `kiln.tools.get(toolId)`). */
  tools: ToolRef[];
  promptId: string | null;
  versionId: string | null;
  isFallback: boolean;
}

/**
 * The content used when Kiln cannot be reached and nothing is cached: the fields of a version as
 * `prompts.createVersion` takes them (without tools), e.g. a copy kept in the application.
 */
export interface PromptFallback {
  /** "" (or absent) with `messages`. */
  systemPrompt?: string;
  developerPrompt?: string | null;
  /** A chat version's template, as `prompts.createVersion` takes it. */
  messages?: TemplateMessage[];
  /** Default `{ type: "object" }`. */
  variablesSchema?: Record<string, unknown>;
  /** Default `{ type: "text" }`. */
  responseFormat?: ResponseFormat;
  temperature?: number | null;
  maxOutputTokens?: number | null;
  model?: string | null;
}

/** Which version `prompts.resolve` answers, how long it is cached and what it falls back to. */
export interface ResolvePromptOptions {
  /** A label: `production` (the default: the published version), `latest` or one of your own. */
  label?: string;
  /** A version number (1, 2, …). */
  version?: number;
  /** A version id (`pv_…`). */
  versionId?: string;
  /** For a name, with an access token: the organization whose prompts are searched. */
  organizationId?: string;
  /** How long an answer is served without a request; older ones are served while revalidated. Default 60 000; 0: no cache. */
  cacheTtlMs?: number;
  /** Used when Kiln cannot be reached (network error, timeout, 429 or 5xx) and nothing is cached. */
  fallback?: PromptFallback;
}

/** The fields of a version that rendering needs. */
interface Content {
  systemPrompt: string;
  developerPrompt: string | null;
  messages?: TemplateMessage[];
  variablesSchema: Record<string, unknown>;
  responseFormat: ResponseFormat;
  temperature: number | null;
  maxOutputTokens: number | null;
  model: string | null;
  tools: ToolRef[];
  /** What its `{{> name}}` tags include, read with it (api.md "Partials"). */
  partials?: Prompt["partials"];
  unresolvedPartial?: Prompt["unresolvedPartial"];
}

/**
 * A prompt version as `prompts.resolve` answers it: fetched from Kiln (or the fallback), ready to
 * `render(variables)` for a model the application calls itself.
 */
export class ResolvedPrompt {
  /** The prompt and its resolved version as fetched; null for a fallback. */
  readonly prompt: Prompt | null;
  readonly promptVersion: PromptVersion | null;
  readonly isFallback: boolean;
  /** For a fallback: the error that made Kiln unreachable. */
  readonly fallbackCause: unknown;
  readonly #content: Content;
  readonly #compile: (content: Content) => TemplateFiller;
  #filler: TemplateFiller | undefined;

  /** Made by `prompts.resolve`. */
  constructor(
    source:
      | { prompt: Prompt; version: PromptVersion; partials?: Pick<Prompt, "partials" | "unresolvedPartial"> }
      | { fallback: PromptFallback; cause: unknown },
    compile: (content: Content) => TemplateFiller,
  ) {
    this.#compile = compile;
    if ("prompt" in source) {
      this.prompt = source.prompt;
      this.promptVersion = source.version;
      this.isFallback = false;
      this.fallbackCause = undefined;
      this.#content = {
        ...source.version,
        ...(source.partials?.partials && { partials: source.partials.partials }),
        ...(source.partials?.unresolvedPartial && { unresolvedPartial: source.partials.unresolvedPartial }),
      };
    } else {
      const f = source.fallback;
      this.prompt = null;
      this.promptVersion = null;
      this.isFallback = true;
      this.fallbackCause = source.cause;
      this.#content = {
        systemPrompt: f.systemPrompt ?? "",
        developerPrompt: f.developerPrompt ?? null,
        ...(f.messages && { messages: f.messages }),
        variablesSchema: f.variablesSchema ?? { type: "object" },
        responseFormat: f.responseFormat ?? { type: "text" },
        temperature: f.temperature ?? null,
        maxOutputTokens: f.maxOutputTokens ?? null,
        model: f.model ?? null,
        tools: [],
      };
    }
  }

  /** The prompt's id; null for a fallback. */
  get promptId(): string | null {
    return this.prompt?.id ?? null;
  }

  /** The version's id; null for a fallback. */
  get versionId(): string | null {
    return this.promptVersion?.id ?? null;
  }

  /** The versions of the prompts it includes, as read with it ("name@label" → version id; api.md "Partials"). */
  get partialVersions(): Record<string, string> {
    return Object.fromEntries((this.#content.partials ?? []).map((p) => [`${p.name}@${p.label}`, p.versionId]));
  }

  /** The version's number (1, 2, …); null for a fallback. */
  get version(): number | null {
    return this.promptVersion?.version ?? null;
  }

  /**
   * The messages and settings for a model call: `variables` checked against the version's schema
   * (KilnError 400 `invalid_argument` with `details`, as a run answers), then the templates filled
   * (Mustache, no HTML escaping), then `messages` (the caller's own, e.g. the user's turn) put at the
   * version's placeholder, or appended when it has none.
   */
  render(variables: Record<string, unknown> = {}, options: { messages?: PromptMessage[] } = {}): RenderedPrompt {
    this.#filler ??= this.#compile(this.#content);
    // The caller's messages go where a run puts them (api.md "Chat prompts"), by the platform's own rule.
    const messages = placeMessages(this.#filler.render(variables), variables, options.messages ?? []);
    const c = this.#content;
    const rf = c.responseFormat;
    return {
      messages,
      model: c.model,
      temperature: c.temperature,
      maxOutputTokens: c.maxOutputTokens,
      responseFormat:
        rf.type === "json_schema" ? { type: "json_schema", name: rf.name ?? "response", schema: rf.schema } : rf,
      tools: c.tools,
      promptId: this.promptId,
      versionId: this.versionId,
      isFallback: this.isFallback,
    };
  }
}
