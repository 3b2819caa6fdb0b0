import type { Kiln, PromptInclude } from "@kiln/sdk";
import { Fragment, useEffect, useState } from "react";
import type { Navigate } from "./router.js";
import { Link } from "./ui.js";

/**
 * What a prompt version includes (docs/api.md "Partials"): `{{> name}}` and `{{> name@label}}`,
 * each a link to the prompt its name stands for now (the newest of the organization with it).
 */

/** How a tag writes an include: `name`, or `name@label` for a label other than production. */
const referenceOf = (i: PromptInclude) => (i.label === "production" ? i.name : `${i.name}@${i.label}`);

/** The prompt each name stands for now (null: none has it), read once per name. */
export function useIncludedPrompts(kiln: Kiln, organizationId: string, names: string[]): Record<string, string | null> {
  const [ids, setIds] = useState<Record<string, string | null>>({});
  const key = [...new Set(names)].sort().join("\n");
  useEffect(() => {
    if (key === "") return;
    let live = true;
    const missing = key.split("\n");
    Promise.all(
      missing.map(async (name) => {
        const page = await kiln.prompts.list({ organizationId, name, limit: 1 });
        return [name, page.data[0]?.id ?? null] as const;
      }),
    ).then(
      (found) => live && setIds((known) => ({ ...known, ...Object.fromEntries(found) })),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [kiln, organizationId, key]);
  return ids;
}

/** "includes tone, team/sign@staging": each a link to its prompt, or its name when none has it now. */
export function IncludesLine({
  includes,
  ids,
  navigate,
}: {
  includes: PromptInclude[];
  ids: Record<string, string | null>;
  navigate: Navigate;
}) {
  if (includes.length === 0) return null;
  return (
    <span className="hint includes">
      includes{" "}
      {includes.map((include, i) => {
        const id = ids[include.name];
        const reference = referenceOf(include);
        return (
          <Fragment key={reference}>
            {i > 0 && ", "}
            {id ? (
              <Link to={`/prompts/${id}`} navigate={navigate}>
                {reference}
              </Link>
            ) : (
              <span title={id === null ? "no prompt has this name now" : undefined}>{reference}</span>
            )}
          </Fragment>
        );
      })}
    </span>
  );
}
