import Type, { type Static, type TSchema } from "typebox";

/**
 * Shared REST schemas: they validate requests and generate the OpenAPI document, whose response
 * schemas are checked against what the routes really send (test/openapi-conformance.test.ts).
 */

/** Every error code of api.md "Errors" (the gateway's STATUS_OF_CODE maps each to its status). */
export const ERROR_CODES = [
  "invalid_argument",
  "unauthenticated",
  "permission_denied",
  "not_found",
  "already_exists",
  "failed_precondition",
  "payload_too_large",
  "resource_exhausted",
  "internal",
  "provider_error",
  "unavailable",
  "provider_timeout",
] as const;

/** A closed set of strings, typed as their union. */
export const OneOf = <const V extends readonly string[]>(values: V, options: { description?: string } = {}) =>
  Type.Unsafe<V[number]>({ type: "string", enum: [...values], ...options });

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: OneOf(ERROR_CODES, { description: "one code per status: see api.md" }),
      message: Type.String(),
      details: Type.Array(
        Type.Object({
          field: Type.String({ description: 'dotted path, array indices in brackets: "prompts[1].variables.city"' }),
          issue: Type.String(),
        }),
      ),
      requestId: Type.String({ description: "the x-request-id of the response" }),
    }),
  },
  { $id: "ErrorEnvelope", title: "ErrorEnvelope" },
);

/** A schema with an `$id`: a component of the OpenAPI document, registered once with `app.addSchema`. */
export type NamedSchema = TSchema & { $id: string };

/** A `$ref` to a named schema, typed as that schema (so handlers are still checked against it). */
export function ref<S extends TSchema>(schema: S) {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== "string") throw new Error("ref() needs a schema with an $id");
  return Type.Unsafe<Static<S>>(Type.Ref(id));
}

const errorRef = ref(ErrorEnvelope);

/** Standard error responses of a route, by status. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((s) => [s, errorRef]));
}

/** A body of exactly these fields: unknown fields are refused with 400 (api.md "Bodies"). */
export const Body = <P extends Record<string, TSchema>>(properties: P) =>
  Type.Object(properties, { additionalProperties: false });

export const Timestamp = Type.String({ format: "date-time" });
export const Nullable = <S extends TSchema>(s: S, options: { description?: string } = {}) =>
  Type.Union([s, Type.Null()], options);

/** `{ data, nextCursor }` of every list (api.md "Conventions"). */
export const List = <S extends TSchema>(item: S) =>
  Type.Object({
    data: Type.Array(item),
    nextCursor: Nullable(Type.String({ description: "pass as ?cursor= for the next page; null on the last" })),
  });

export const ListQuery = {
  // No leading zero: "0" is out of range (1–200), not "the default".
  limit: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,2}$", description: "1–200, default 50" })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** The Idempotency-Key request header of the creating and running routes that honour it (api.md "Conventions"). */
export const IdempotencyHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({
      description:
        "1 to 255 visible ASCII characters: a retry with the same key and body within 24 h replays the first answer (Idempotent-Replayed: true)",
    }),
  ),
});

/** Stability classes of docs/api.md "Stability", sent as x-api-stability. */
export type Stability = "stable" | "beta" | "non-public" | "legacy";

declare module "fastify" {
  interface FastifyContextConfig {
    stability?: Stability;
    /** Served without credentials. */
    public?: boolean;
    /**
     * The body as the OpenAPI document shows it, where the route checks a looser schema and the
     * service behind it checks the rest (openapi.ts).
     */
    documentedBody?: unknown;
  }
}
