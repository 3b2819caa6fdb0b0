/**
 * Rendering a prompt version as the platform renders it for a run, with the platform's own code
 * (@kiln/contracts, compiled into the package by scripts/build.mjs): the variables checked against
 * the version's JSON Schema (ajv 2020-12, strict mode off, every error, formats, and RE2 for
 * `pattern`, `patternProperties` and `propertyNames`, as the services build it: schema-ajv.ts),
 * the errors named as a run names them (field-issues.ts), then the template's messages (system and
 * developer prompts for a text version) filled by the services' Mustache renderer
 * (prompt-template.ts: no HTML escaping, a non-string value written as JSON, `{{> name}}` replaced
 * with the included prompt's text as resolved with the version, api.md "Partials"). Loaded on the
 * first `prompts.resolve`, so that importing the SDK does not load ajv, Mustache or RE2.
 */
import { fieldIssuesOf } from "@kiln/contracts/field-issues";
import { includeKey, partialLookupOf } from "@kiln/contracts/partials";
import { type TemplateMessage, templateOf } from "@kiln/contracts/prompt-messages";
import { createTemplateRenderer, renderPrompt } from "@kiln/contracts/prompt-template";
import { createSchemaAjv } from "@kiln/contracts/schema-ajv";
import type { TemplateToken } from "@kiln/contracts/template-parse";
import { type ErrorDetail, KilnError } from "./kiln-error.js";

export type { TemplateMessage };

/** A prompt a version includes, as `GET /api/prompts/:id?partials=true` answers it. */
export interface IncludedPartial {
  name: string;
  label: string;
  template: string;
}

const invalid = (message: string, details: ErrorDetail[]) =>
  new KilnError(400, "invalid_argument", message, details, undefined, undefined);

/** Fills a version's templates: `render` throws KilnError 400 (as a run would) on bad variables. */
export interface TemplateFiller {
  /** The template's messages in order, text filled, placeholders left for the caller's messages. */
  render(variables: unknown): TemplateMessage[];
}

/** The filler of one version's templates and schema: compiled once, each template parsed once. */
export function compileTemplates(content: {
  systemPrompt: string;
  developerPrompt: string | null;
  messages?: TemplateMessage[];
  variablesSchema: Record<string, unknown>;
  /** What its `{{> name}}` tags include, as resolved with the version (api.md "Partials"). */
  partials?: readonly IncludedPartial[];
  /** An include that did not resolve: rendering throws, as a run of the version fails. */
  unresolvedPartial?: { reference: string; message: string };
}): TemplateFiller {
  const included = content.partials ?? [];
  const partials =
    included.length > 0 ? partialLookupOf(new Map(included.map((p) => [includeKey(p), p.template]))) : undefined;
  const unresolved = content.unresolvedPartial;
  const template = templateOf(content);
  // The version's templates and what they include are a fixed few: a plain map keeps their parse.
  const renderer = createTemplateRenderer(new Map<string, TemplateToken[]>());
  // An instance per schema: schemas of different prompts may declare the same `$id`.
  const validate = createSchemaAjv({ validateSchema: false }).compile(content.variablesSchema);
  return {
    render(variables) {
      if (typeof variables !== "object" || variables === null || Array.isArray(variables)) {
        throw invalid("variables must be an object", [{ field: "variables", issue: "must be an object" }]);
      }
      if (!validate(variables)) {
        throw invalid(
          "the variables do not match the version's variables schema",
          fieldIssuesOf(validate.errors ?? [], "variables", variables),
        );
      }
      if (unresolved) {
        // A state conflict (api.md "Conventions"), as the SDK answers when it cannot render.
        throw new KilnError(
          409,
          "failed_precondition",
          unresolved.message,
          [{ field: "partials", issue: `{{> ${unresolved.reference}}} does not resolve` }],
          undefined,
          undefined,
        );
      }
      const values = variables as Record<string, unknown>;
      return template.map((m) =>
        m.role === "placeholder" ? m : { role: m.role, content: renderPrompt(renderer, m.content, values, partials) },
      );
    },
  };
}
