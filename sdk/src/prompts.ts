import type { CreatePromptVersionRequest, RequestBody } from "./resources.js";
import type { Transport } from "./transport.js";
import { type BodyArgs, type FamilyOf, LabelledResource } from "./versioned-resource.js";

type PromptFamily = FamilyOf<
  "Prompt",
  {
    createVersionArgs: BodyArgs<CreatePromptVersionRequest>;
    publishArgs: BodyArgs<RequestBody<"publishPromptVersion">>;
  }
>;

/**
 * Prompts and their immutable versions (docs/api.md "Stability", public beta): `get` answers the
 * prompt with `version` the one `versionId` names (default: the published one, else the latest);
 * `createVersion` creates an immutable draft; `publish` publishes a draft version.
 */
export class Prompts extends LabelledResource<PromptFamily> {
  constructor(t: Transport) {
    super(t, "prompts");
  }
}
