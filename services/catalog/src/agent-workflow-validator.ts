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
  const c = deps.collections;

  async function referenceIssues(
    organizationId: string,
    workflow: ParsedWorkflow,
  ): Promise<{ errors: WorkflowIssue[]; pins: Map<number, string> }> {
    const errors: WorkflowIssue[] = [];
    const pins = new Map<number, string>();
    await Promise.all(
      workflow.steps.map(async (step) => {
        const keys = REF_KEYS[step.type];
        const at = `steps[${step.index}].ref`;
        const idAt = `${at}.${keys.id}`;
        const versionAt = `${at}.${keys.version}`;
        const { id, versionId } = step.ref;
        const unknown = (path: string, what: string) =>
          errors.push({ path, code: "unknown_reference", message: `${what} does not exist` });
        const unpublished = (path: string, message: string) =>
          errors.push({ path, code: "unpublished_reference", message });
        if (step.type === "prompt") {
          const prompt = await c.prompts.findOne({ _id: id });
          if (!prompt || prompt.organizationId !== organizationId) return unknown(idAt, `prompt ${id}`);
          if (versionId !== undefined) {
            const v = await c.promptVersions.findOne({ _id: versionId, promptId: id });
            if (!v) return unknown(versionAt, `prompt version ${versionId}`);
            if (v.status !== "published") return unpublished(versionAt, `prompt version ${v.version} is not published`);
            return;
          }
          const [live] = await c.promptVersions.find(
            { promptId: id, status: "published" },
            { sort: LIVE_PUBLISHED_SORT, limit: 1 },
          );
          if (!live) return unpublished(idAt, `prompt "${prompt.name}" has no published version`);
          pins.set(step.index, live._id);
        } else if (step.type === "skill") {
          const skill = await c.skills.findOne({ _id: id });
          if (!skill || skill.organizationId !== organizationId) return unknown(idAt, `skill ${id}`);
          if (versionId !== undefined) {
            const v = await c.skillVersions.findOne({ _id: versionId, skillId: id });
            if (!v) return unknown(versionAt, `skill version ${versionId}`);
            if (v.status !== "published") return unpublished(versionAt, `skill version ${v.version} is not published`);
            return;
          }
          const [live] = await c.skillVersions.find(
            { skillId: id, status: "published" },
            { sort: LIVE_PUBLISHED_SORT, limit: 1 },
          );
          if (!live) return unpublished(idAt, `skill "${skill.name}" has no published version`);
          pins.set(step.index, live._id);
        } else {
          const tool = await c.tools.findOne({ _id: id });
          if (!tool || tool.organizationId !== organizationId) return unknown(idAt, `tool ${id}`);
          if (versionId !== undefined) {
            const v = await c.toolVersions.findOne({ _id: versionId, toolId: id });
            if (!v) return unknown(versionAt, `tool version ${versionId}`);
            return;
          }
          const current = await c.toolVersions.findOne({ toolId: id }, { sort: { version: -1 } });
          if (!current) return unknown(idAt, `tool ${id}`);
          pins.set(step.index, current._id);
        }
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
