import type { CallOptions } from "@connectrpc/connect";
import type { FastifyRequest } from "fastify";
import Type, { type Static, type TSchema } from "typebox";
import { Body } from "../schemas.js";
import { Description, Id, Name, organizationOf } from "./catalog-requests.js";
import type { ByIdArgs, VersionedWrite } from "./versioned-routes.js";

/**
 * The writes that skills and agents share (a resource made by name, drafts copied, publish by
 * version; tools too change their metadata): each body with the call it makes of the catalog.
 */

/** Create a skill or an agent: its organization (an API key's own when left out), name and description. */
export const NamedBody = Body({
  organizationId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: "required unless the caller is an API key" }),
  ),
  name: Name,
  description: Type.Optional(Description),
});

/** Change a resource's name or description. */
export const MetadataBody = Body({ name: Type.Optional(Name), description: Type.Optional(Description) });

/** Create a draft version copied from another (default: the latest). */
export const FromVersionBody = Body({ fromVersionId: Type.Optional(Id) });

/** Publish a version (default: the draft). */
export const OptionalVersionBody = Body({ versionId: Type.Optional(Id) });

type Rpc<Q, R> = (request: Q, options: CallOptions) => Promise<R>;

/** Create by name: `call` with the organization, the name and the description ("" when left out). */
export const createByName = <R>(
  summary: string,
  call: Rpc<{ organizationId: string; name: string; description: string }, R>,
): VersionedWrite<typeof NamedBody, { body: Static<typeof NamedBody>; request: FastifyRequest }, R> => ({
  summary,
  body: NamedBody,
  call: ({ body, request }, options) =>
    call(
      {
        organizationId: organizationOf(request, body.organizationId),
        name: body.name,
        description: body.description ?? "",
      },
      options,
    ),
});

/** Change the name or description (what is left out stays). */
export const changeMetadata = <R>(
  summary: string,
  call: Rpc<{ id: string; name?: string; description?: string }, R>,
): VersionedWrite<typeof MetadataBody, ByIdArgs<typeof MetadataBody>, R> => ({
  summary,
  body: MetadataBody,
  call: ({ id, body }, options) => call({ id, name: body.name, description: body.description }, options),
});

/** A write whose body may name a version (`versionOf`): `call` with the resource's id and that version's ("" for none). */
const byVersion =
  <B extends TSchema>(body: B, versionOf: (body: Static<B>) => string | undefined, conflicts?: boolean) =>
  <R>(
    summary: string,
    call: (id: string, versionId: string, options: CallOptions) => Promise<R>,
  ): VersionedWrite<B, ByIdArgs<B>, R> => ({
    summary,
    body,
    conflicts,
    call: ({ id, body }, options) => call(id, versionOf(body) ?? "", options),
  });

/** Create the draft, copied from `fromVersionId` (default: the latest); one draft at most, so it may conflict. */
export const copyToDraft = byVersion(FromVersionBody, (b) => b.fromVersionId, true);

/** Publish the version `versionId` (default: the draft). */
export const publishVersion = byVersion(OptionalVersionBody, (b) => b.versionId);
