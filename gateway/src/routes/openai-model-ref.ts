/** The model names of the OpenAI-compatible endpoint: which Kiln prompt or skill, at which label. */

/** The label a model name without `@label` means: the published version. */
export const DEFAULT_LABEL = "production";

export interface ModelRef {
  kind: "prompt" | "skill";
  /** An id or a name. */
  ref: string;
  label: string;
}

/** `kiln/<prompt id or name>[@label]` or `kiln/skill/<skill id or name>[@label]`; undefined when not one. */
export function parseModel(model: string): ModelRef | undefined {
  if (!model.startsWith("kiln/")) return undefined;
  let rest = model.slice("kiln/".length);
  let kind: ModelRef["kind"] = "prompt";
  if (rest.startsWith("skill/")) {
    kind = "skill";
    rest = rest.slice("skill/".length);
  } else if (rest.startsWith("prompt/")) {
    rest = rest.slice("prompt/".length);
  }
  const at = rest.lastIndexOf("@");
  const ref = at >= 0 ? rest.slice(0, at) : rest;
  const label = at >= 0 ? rest.slice(at + 1) : DEFAULT_LABEL;
  if (ref === "" || label === "") return undefined;
  return { kind, ref, label };
}
