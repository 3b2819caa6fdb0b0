import type { MessageInitShape } from "@bufbuild/protobuf";
import { type JsonText, jsonTextOf as jsonTextMessageOf } from "@kiln/kit/json-text";
import { LIMITS } from "@kiln/kit/limits";
import type { ToolSelectorSchema } from "@kiln/proto/catalog";
import type { FastifyRequest } from "fastify";
import Type from "typebox";
import { HttpError } from "../errors.js";
import { principalOf } from "../http/request.js";
import { jsonTextOf, MAX_JSON_BYTES } from "../json-limits.js";
import { Body, ListQuery } from "../schemas.js";

/**
 * Request pieces shared by the catalog routes. The gateway checks shapes (types, required and
 * unknown fields); the catalog service judges meaning (placeholders, JSON Schema validity, the
 * allowlist, publish rules).
 */

export const Id = Type.String({ minLength: 1, maxLength: 100 });
export const OrganizationId = Type.String({ minLength: 1, maxLength: 100 });
/** A label (docs/labels.md): `production` (default of runs), `latest`, or one the organization set. */
export const LabelName = Type.String({
  pattern: "^[a-z][a-z0-9-]{0,39}$",
  description: "a label: production (the published version), latest (the newest version) or your own",
});
/** A name (the service trims it; docs/api.md "Limits"). */
export const Name = Type.String({ maxLength: LIMITS.nameChars });
/** A description (the service trims it). */
export const Description = Type.String({ maxLength: LIMITS.descriptionChars });

/** A new version's change message: what changed and why (shown with the version). */
export const ChangeMessage = Type.String({
  maxLength: LIMITS.changeMessageChars,
  description: "what changed and why; shown with the version",
});
/** A prompt version's system or developer prompt: a Mustache template. */
export const PromptText = (description: string) => Type.String({ maxLength: LIMITS.promptTextChars, description });
export const ModelId = Type.String({ minLength: 1, maxLength: 200, description: 'a model id, e.g. "local/echo"' });
/** A response-cache default TTL of a prompt version or label (docs/cache.md "Defaults"): the header's bounds. */
export const CacheTtlSeconds = (more = "") =>
  Type.Integer({
    minimum: 1,
    maximum: LIMITS.cacheTtlSeconds,
    description: `seconds, 1 to ${LIMITS.cacheTtlSeconds}: runs without a Kiln-Cache header use the response cache with it${more}`,
  });

/**
 * A free-form JSON object (schemas, tool config, bindings): sent to the service as JSON text,
 * unchanged, and at most `maxBytes` of it (docs/api.md "Limits").
 */
export const JsonObject = (description: string, maxBytes: number) =>
  Type.Unsafe<Record<string, unknown>>({
    type: "object",
    additionalProperties: true,
    description,
    [MAX_JSON_BYTES]: maxBytes,
  });

/** Any JSON value, at most `maxBytes` of it. */
export const JsonValue = (description: string, maxBytes: number) =>
  Type.Unknown({ description, [MAX_JSON_BYTES]: maxBytes });

/** A tool to attach: a bare tool id pins the tool's current version (api.md "Prompts", "Skills"). */
export const ToolSelectorBody = Type.Union([
  Type.String({ minLength: 1, maxLength: 100, description: "a tool id: pins the tool's current version" }),
  Body({ toolId: Id, toolVersionId: Type.Optional(Id) }),
]);
export type ToolSelectorInput = string | { toolId: string; toolVersionId?: string };

export const toolSelectors = (
  tools: readonly ToolSelectorInput[] | undefined,
): MessageInitShape<typeof ToolSelectorSchema>[] =>
  (tools ?? []).map((t) =>
    typeof t === "string" ? { toolId: t } : { toolId: t.toolId, toolVersionId: t.toolVersionId },
  );

/** Free-form JSON → the JSON text of an RPC `*_json` field (undefined stays "not given"). */
export const jsonText = (value: unknown): string | undefined => (value === undefined ? undefined : jsonTextOf(value));

/** Free-form JSON → the `kiln.common.v1.JsonText` of a catalog RPC, with the text the size check measured. */
export const jsonTextMessage = (value: unknown): JsonText => jsonTextMessageOf(jsonTextOf(value));

/** As jsonTextMessage; undefined stays "not given" (the catalog's default, or the current version's). */
export const optionalJsonTextMessage = (value: unknown): JsonText | undefined =>
  value === undefined ? undefined : jsonTextMessage(value);

/** A body's fields with `null` (a field cleared or left to its default) as absent, as proto's optional fields take them. */
export function withoutNulls<T extends Record<string, unknown>>(body: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(body).map(([key, value]) => [key, value ?? undefined])) as {
    [K in keyof T]: Exclude<T[K], null>;
  };
}

export const IdParams = Type.Object({ id: Id });
export const VersionParams = Type.Object({ id: Id, versionId: Id });

export const ListQuerystring = Type.Object(
  {
    organizationId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: "required unless the caller is an API key" }),
    ),
    ...ListQuery,
  },
  { additionalProperties: false },
);

export const VersionIdQuerystring = Type.Object(
  { versionId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
  { additionalProperties: false },
);

export const DiffQuerystring = Type.Object(
  {
    against: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: "a version id; default: the version just before" }),
    ),
  },
  { additionalProperties: false },
);

/**
 * The organization a create or list acts in: the one given, else an API key's own (api.md
 * "Organization scoping"); a user must name it.
 */
export function organizationOf(request: FastifyRequest, given: string | undefined): string {
  if (given !== undefined && given !== "") return given;
  const principal = principalOf(request);
  if (principal.type === "api_key") return principal.organizationId;
  throw new HttpError("invalid_argument", "organizationId is required", [
    { field: "organizationId", issue: "is required" },
  ]);
}

/** The RPC request of a list route. */
export function listRequest(
  request: FastifyRequest,
  query: { organizationId?: string; limit?: string; cursor?: string },
): { organizationId: string; limit: number; cursor: string } {
  return {
    organizationId: organizationOf(request, query.organizationId),
    limit: query.limit ? Number(query.limit) : 0,
    cursor: query.cursor ?? "",
  };
}
