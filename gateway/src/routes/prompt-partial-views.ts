import type { Prompt, PromptInclude } from "@kiln/proto/catalog";
import Type from "typebox";
import { ref } from "../schemas.js";

/** Prompt partials in REST answers (api.md "Partials"): what a version includes, and what that stands for now. */

export const PromptIncludeView = Type.Object(
  {
    name: Type.String({ description: "the included prompt's name: the newest prompt of the organization with it" }),
    label: Type.String({ description: '"production" for {{> name}}, else the label of {{> name@label}}' }),
  },
  { additionalProperties: false, $id: "PromptInclude" },
);

export const promptIncludeView = (i: PromptInclude) => ({ name: i.name, label: i.label });

export const PromptPartialView = Type.Object(
  {
    name: Type.String(),
    label: Type.String(),
    promptId: Type.String(),
    versionId: Type.String({ description: "the version its label points at now" }),
    version: Type.Integer(),
    template: Type.String({
      description: "the text a tag naming it is replaced with (its text messages joined by a blank line)",
    }),
  },
  { additionalProperties: false, $id: "PromptPartial" },
);

/** The fields `GET /api/prompts/:id?partials=true` adds to the prompt. */
export const PromptPartialFields = {
  partials: Type.Optional(
    Type.Array(ref(PromptPartialView), {
      description:
        "with ?partials=true: every prompt the version includes, directly or not, at the version its label points at now",
    }),
  ),
  unresolvedPartial: Type.Optional(
    Type.Object(
      {
        reference: Type.String({ description: 'as a tag writes it: "name" or "name@label"' }),
        message: Type.String(),
      },
      {
        additionalProperties: false,
        description: "with ?partials=true: an include that does not resolve now (a run of the version fails)",
      },
    ),
  ),
};

/** The partials of a prompt read with them; nothing for a read without. */
export function promptPartialsView(p: Prompt) {
  if (p.partials.length === 0 && !p.unresolvedPartial) return {};
  return {
    partials: p.partials.map((x) => ({
      name: x.name,
      label: x.label,
      promptId: x.promptId,
      versionId: x.versionId,
      version: x.version,
      template: x.template,
    })),
    ...(p.unresolvedPartial && {
      unresolvedPartial: { reference: p.unresolvedPartial.reference, message: p.unresolvedPartial.message },
    }),
  };
}
