/**
 * Workflow validation with the catalog at hand: the pure checks of domain/workflow.ts plus the
 * references a workflow makes, and the findings as error details.
 */
import type { FieldIssue } from "@kiln/kit/errors";
import type { CatalogDeps } from "./catalog-deps.js";
import { isJsonObject, type JsonObject } from "./domain/json-schema.js";
import { LIVE_PUBLISHED_SORT } from "./domain/versions.js";
import {
  checkWorkflow,
  type ParsedWorkflow,
  pinWorkflow,
  REF_KEYS,
  sortIssues,
  type WorkflowIssue,
} from "./domain/workflow.js";
import type { DraftedVersionDoc, ResourceDoc, ToolVersionDoc } from "./store/catalog-store.js";
import { type FamilyStore, familyStores } from "./versioned/families.js";

export interface WorkflowValidation {
  valid: boolean;
  errors: WorkflowIssue[];
  warnings: WorkflowIssue[];
}

/** Workflow findings as error details: `workflow.<path>` with the message and code. */
export function workflowDetails(issues: readonly WorkflowIssue[]): FieldIssue[] {
  return issues.map((i) => ({
    field: i.path === "" ? "workflow" : `workflow.${i.path}`,
    issue: `${i.message} (${i.code})`,
  }));
}

export type WorkflowValidator = ReturnType<typeof createWorkflowValidator>;

/**
 * Validates a workflow for an organization: the pure checks of domain/workflow.ts plus its
 * references, looked up in the catalog's own collections. A reference of another organization is
 * reported exactly like a missing one. `pins` holds, by step index, the version a reference
 * without one pins now: the live published prompt or skill version, the tool's current version.
 */
export function createWorkflowValidator(deps: CatalogDeps) {
  const stores = familyStores(deps);

  /** What one reference pins (a version id), or the finding about it; nothing for a pinned one. */
  type Finding = { pin: string } | WorkflowIssue | undefined;
  const unknown = (path: string, what: string): WorkflowIssue => ({
    path,
    code: "unknown_reference",
    message: `${what} does not exist`,
  });
  const unpublished = (path: string, message: string): WorkflowIssue => ({
    path,
    code: "unpublished_reference",
    message,
  });

  /**
   * A reference into `family`: the resource must be the organization's; a version named must be
   * one of its versions (and, for prompts and skills, published); without one, the live published
   * version (a tool's current version) is pinned.
   */
  async function checkReference<P extends ResourceDoc, V extends DraftedVersionDoc | ToolVersionDoc>(
    family: FamilyStore<P, V>,
    organizationId: string,
    step: ParsedWorkflow["steps"][number],
  ): Promise<Finding> {
    const keys = REF_KEYS[step.type];
    const idAt = `steps[${step.index}].ref.${keys.id}`;
    const versionAt = `steps[${step.index}].ref.${keys.version}`;
    const { id, versionId } = step.ref;
    const noun = family.noun;
    const parent = await family.parents.findOne({ _id: id });
    if (!parent || parent.organizationId !== organizationId) return unknown(idAt, `${noun} ${id}`);
    const ofParent = { [family.parentField]: id };
    if (versionId !== undefined) {
      const v = await family.versions.findOne({ _id: versionId, ...ofParent });
      if (!v) return unknown(versionAt, `${noun} version ${versionId}`);
      if ("status" in v && v.status !== "published") {
        return unpublished(versionAt, `${noun} version ${v.version} is not published`);
      }
      return undefined;
    }
    if (noun === "tool") {
      const current = await family.versions.findOne(ofParent, { sort: { version: -1 } });
      return current ? { pin: current._id } : unknown(idAt, `tool ${id}`);
    }
    const [live] = await family.versions.find(
      { ...ofParent, status: "published" },
      { sort: LIVE_PUBLISHED_SORT, limit: 1 },
    );
    return live ? { pin: live._id } : unpublished(idAt, `${noun} "${parent.name}" has no published version`);
  }

  async function referenceIssues(
    organizationId: string,
    workflow: ParsedWorkflow,
  ): Promise<{ errors: WorkflowIssue[]; pins: Map<number, string> }> {
    const errors: WorkflowIssue[] = [];
    const pins = new Map<number, string>();
    await Promise.all(
      workflow.steps.map(async (step) => {
        const found = await (step.type === "prompt"
          ? checkReference(stores.prompt, organizationId, step)
          : step.type === "skill"
            ? checkReference(stores.skill, organizationId, step)
            : checkReference(stores.tool, organizationId, step));
        if (found && "pin" in found) pins.set(step.index, found.pin);
        else if (found) errors.push(found);
      }),
    );
    return { errors, pins };
  }

  return {
    /** Every finding about `value` (any JSON) in `organizationId`, and the pinned workflow when valid. */
    async validate(
      organizationId: string,
      value: unknown,
    ): Promise<WorkflowValidation & { pinned: JsonObject | undefined }> {
      const checked = checkWorkflow(value);
      const refs = await referenceIssues(organizationId, checked.workflow);
      const errors = sortIssues([...checked.errors, ...refs.errors]);
      const valid = errors.length === 0;
      return {
        valid,
        errors,
        warnings: checked.warnings,
        pinned: valid && isJsonObject(value) ? pinWorkflow(value, refs.pins) : undefined,
      };
    },
  };
}
