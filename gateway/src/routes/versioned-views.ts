import type { Timestamp as TimestampMessage } from "@bufbuild/protobuf/wkt";
import type { Author, VersionSummary } from "@kiln/proto/catalog";
import Type, { type TProperties } from "typebox";
import { Nullable, OneOf, ref, Timestamp } from "../schemas.js";
import { iso } from "./views.js";

/**
 * The one versioned-resource shape of prompts, skills and agents (api.md "Prompts", "Skills",
 * "Agents"): a resource or version view is the common fields with the family's own in between,
 * as a schema and as the conversion from the catalog's message, each written once here.
 */

/** A timestamp the catalog always sets, as ISO 8601. */
export const timestampOf = (t: TimestampMessage | undefined) => iso(t) ?? "";

export const VersionStatus = OneOf(["draft", "published"]);
export const versionStatusOf = (s: string) => s as "draft" | "published";

export const AuthorView = Type.Object(
  {
    type: OneOf(["user", "api_key", "service"], {
      description: "a member (`id`: the user id), an API key (the key id) or a service",
    }),
    id: Type.String(),
  },
  { $id: "Author" },
);

/** Who created a version and its change message, as every version view carries them. */
export const Authorship = {
  createdBy: Nullable(ref(AuthorView), {
    description: "null for versions an import made or made before authors were kept",
  }),
  message: Nullable(Type.String({ description: "the change message given at creation" })),
};
export const authorshipOf = (v: { createdBy?: Author; message?: string }) => ({
  createdBy: v.createdBy ? { type: v.createdBy.type as "user" | "api_key" | "service", id: v.createdBy.id } : null,
  message: v.message ?? null,
});

export const VersionSummaryView = Type.Object(
  {
    id: Type.String(),
    version: Type.Integer(),
    status: VersionStatus,
    createdAt: Timestamp,
    publishedAt: Nullable(Timestamp),
    ...Authorship,
  },
  { $id: "VersionSummary" },
);
export const versionSummaryView = (v: VersionSummary) => ({
  id: v.id,
  version: v.version,
  status: versionStatusOf(v.status),
  createdAt: timestampOf(v.createdAt),
  publishedAt: iso(v.publishedAt),
  ...authorshipOf(v),
});

/** A version id a resource may lack (its draft, its published version): null then. */
export const OptionalVersionId = Nullable(Type.String());

/** The summaries of a resource's versions, oldest first. */
export const VersionSummaries = Type.Array(ref(VersionSummaryView));

/** A component schema's name and description. */
type Named = { $id: string; description?: string };

/** What a resource message carries of every family: identity, name and timestamps. */
interface ResourceMessage {
  id: string;
  organizationId: string;
  name: string;
  description: string;
  createdAt?: TimestampMessage;
  updatedAt?: TimestampMessage;
}

/**
 * A prompt, skill or agent: id, organization, name and description, then the family's `fields`,
 * then its timestamps, then `after` (fields outside the stable contract).
 */
export const resourceShape = {
  schema: <F extends TProperties, A extends TProperties>(fields: F, after: A, named: Named) =>
    Type.Object(
      {
        id: Type.String(),
        organizationId: Type.String(),
        name: Type.String(),
        description: Type.String(),
        ...fields,
        createdAt: Timestamp,
        updatedAt: Timestamp,
        ...after,
      },
      named,
    ),
  view: <F extends object, A extends object>(r: ResourceMessage, fields: F, after: A) => ({
    id: r.id,
    organizationId: r.organizationId,
    name: r.name,
    description: r.description,
    ...fields,
    createdAt: timestampOf(r.createdAt),
    updatedAt: timestampOf(r.updatedAt),
    ...after,
  }),
};

/** What a version message carries of every family: identity, number, status and timestamps. */
interface VersionMessage {
  id: string;
  version: number;
  status: string;
  createdAt?: TimestampMessage;
  publishedAt?: TimestampMessage;
  createdBy?: Author;
  message?: string;
}

/** A version of a prompt, skill or agent: id, `owner` fields, number and status, the family's `content`, timestamps. */
export const versionShape = {
  schema: <O extends TProperties, C extends TProperties>(owner: O, content: C, named: Named, number = Type.Integer()) =>
    Type.Object(
      {
        id: Type.String(),
        ...owner,
        version: number,
        status: VersionStatus,
        ...content,
        createdAt: Timestamp,
        publishedAt: Nullable(Timestamp),
        ...Authorship,
      },
      named,
    ),
  view: <O extends object, C extends object>(v: VersionMessage, owner: O, content: C) => ({
    id: v.id,
    ...owner,
    version: v.version,
    status: versionStatusOf(v.status),
    ...content,
    createdAt: timestampOf(v.createdAt),
    publishedAt: iso(v.publishedAt),
    ...authorshipOf(v),
  }),
};

/** A skill's or agent's versions and the one `what` (its content fields) describes. */
export const describedShape = {
  schema: (what: string) => ({
    versions: VersionSummaries,
    describedVersionId: Type.String({ description: `${what}: ?versionId=, else the draft, else the published one` }),
  }),
  view: (r: { versions: VersionSummary[]; describedVersionId: string }) => ({
    versions: r.versions.map(versionSummaryView),
    describedVersionId: r.describedVersionId,
  }),
};
