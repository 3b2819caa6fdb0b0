/**
 * The labels of many prompts or skills, read from the catalog in batches (`ListLabels` with
 * `parentIds`, up to 100 parents a call) instead of one call per parent.
 */
import type { CallOptions, Client } from "@connectrpc/connect";
import type { CatalogService, Label } from "@kiln/proto/catalog";

/** How many parents one `ListLabels` call answers (the catalog's bound). */
export const LABEL_PARENTS_PER_CALL = 100;

/** Every label of each of `parentIds` (one organization's, of one kind), by parent id; each parent present. */
export async function labelsOfEach(
  catalog: Client<typeof CatalogService>,
  kind: "prompt" | "skill" | "agent",
  parentIds: readonly string[],
  options: CallOptions,
): Promise<Map<string, Label[]>> {
  const ids = [...new Set(parentIds)];
  const out = new Map<string, Label[]>(ids.map((id) => [id, []]));
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += LABEL_PARENTS_PER_CALL) batches.push(ids.slice(i, i + LABEL_PARENTS_PER_CALL));
  const answers = await Promise.all(batches.map((batch) => catalog.listLabels({ kind, parentIds: batch }, options)));
  for (const { labels } of answers) for (const label of labels) out.get(label.parentId)?.push(label);
  return out;
}
