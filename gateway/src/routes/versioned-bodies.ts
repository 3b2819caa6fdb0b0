import Type from "typebox";
import { Body } from "../schemas.js";
import { Description, Id, Name } from "./catalog-requests.js";

/** Request bodies that skills and agents share (a resource made by name, drafts copied, publish by version). */

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
