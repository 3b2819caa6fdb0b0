import Type, { type TSchema } from "typebox";

/** Shared REST schemas: they validate requests, shape responses and generate the OpenAPI document. */

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: "invalid_argument, unauthenticated, permission_denied, not_found, ..." }),
      message: Type.String(),
      details: Type.Array(Type.Object({ field: Type.String(), issue: Type.String() })),
      requestId: Type.String(),
    }),
  },
  { $id: "ErrorEnvelope", title: "ErrorEnvelope" },
);

const errorRef = Type.Ref("ErrorEnvelope");

/** Standard error responses of a route, by status. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((s) => [s, errorRef]));
}

/** A body of exactly these fields: unknown fields are refused with 400 (api.md "Bodies"). */
export const Body = <P extends Record<string, TSchema>>(properties: P) =>
  Type.Object(properties, { additionalProperties: false });

export const Timestamp = Type.String({ format: "date-time" });
export const Nullable = <S extends TSchema>(s: S) => Type.Union([s, Type.Null()]);

/** `{ data, nextCursor }` of every list (api.md "Conventions"). */
export const List = <S extends TSchema>(item: S) =>
  Type.Object({ data: Type.Array(item), nextCursor: Nullable(Type.String()) });

export const ListQuery = {
  // No leading zero: "0" is out of range (1–200), not "the default".
  limit: Type.Optional(Type.String({ pattern: "^[1-9][0-9]{0,2}$", description: "1–200, default 50" })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** Stability classes of spec §9, sent as x-api-stability. */
export type Stability = "stable" | "beta" | "non-public" | "legacy";

declare module "fastify" {
  interface FastifyContextConfig {
    stability?: Stability;
    /** Served without credentials. */
    public?: boolean;
  }
}
