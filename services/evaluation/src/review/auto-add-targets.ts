/**
 * An auto-add rule's target checked against the catalog (docs/review.md "Adding by rule"): the id
 * must be one of the kind the rule names (its prefix) and name a prompt, skill or agent of the
 * queue's organization. Another organization's id, or a skill's id under `kind: "prompt"`, is
 * refused at its field rather than stored as a rule that never matches a run.
 */
import type { Client } from "@connectrpc/connect";
import { DomainError, type FieldIssue } from "@kiln/kit/errors";
import type { CatalogService } from "@kiln/proto/catalog";
import { inOrganization, remoteCall } from "../access.js";
import type { AutoAddRuleDoc } from "./review-store.js";

/** The catalog reads the check makes, as the evaluation service acting in the queue's organization. */
export type TargetReader = Pick<Client<typeof CatalogService>, "getPrompt" | "getSkill" | "getAgent">;

const PREFIX: Record<AutoAddRuleDoc["kind"], string> = { prompt: "prm", skill: "skl", agent: "agt" };

/** The organization owning the target, "" when the catalog has none it may show this organization. */
async function ownerOf(catalog: TargetReader, organizationId: string, rule: AutoAddRuleDoc): Promise<string> {
  const options = inOrganization(organizationId);
  try {
    if (rule.kind === "prompt")
      return (
        (await remoteCall(catalog.getPrompt({ id: rule.id, versionId: "" }, options))).prompt?.organizationId ?? ""
      );
    if (rule.kind === "skill")
      return (await remoteCall(catalog.getSkill({ id: rule.id, versionId: "" }, options))).skill?.organizationId ?? "";
    return (await remoteCall(catalog.getAgent({ id: rule.id, versionId: "" }, options))).agent?.organizationId ?? "";
  } catch (e) {
    // Another organization's resource is not found to this one (or refused): either way, none here.
    if (e instanceof DomainError && (e.kind === "not_found" || e.kind === "permission_denied")) return "";
    throw e;
  }
}

/** The issues of the rule's target, at `<field>.id`; none when it is a `kind` of this organization. */
export async function autoAddTargetIssues(
  catalog: TargetReader,
  organizationId: string,
  rule: AutoAddRuleDoc,
  field: string,
): Promise<FieldIssue[]> {
  const prefix = PREFIX[rule.kind];
  if (!new RegExp(`^${prefix}_[0-9a-f]{32}$`).test(rule.id))
    return [
      { field: `${field}.id`, issue: `must be ${rule.kind === "agent" ? "an" : "a"} ${rule.kind} id (${prefix}_…)` },
    ];
  if ((await ownerOf(catalog, organizationId, rule)) !== organizationId)
    return [{ field: `${field}.id`, issue: `no ${rule.kind} "${rule.id}" in this organization` }];
  return [];
}
