import { alreadyExists, DomainError, type FieldIssue } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { isDuplicateKeyError } from "@kiln/kit/store";
import type { CatalogDeps } from "./catalog-deps.js";
import { fieldPath, Issues } from "./domain/issues.js";
import { checkJsonSchema, type JsonObject, parseJsonText } from "./domain/json-schema.js";
import { checkToolConfig, isToolType, TOOL_KEY_PATTERN, TOOL_TYPES, type ToolType } from "./domain/tool-config.js";
import type { ToolPin } from "./domain/tool-pins.js";
import type { ToolDoc, ToolVersionDoc } from "./store/catalog-store.js";
import type { VersionDiffView } from "./versioned/diff.js";
import { familyStores } from "./versioned/families.js";
import { authorOf, checkChangeMessage, versionedResource } from "./versioned/resource.js";

/** A tool with its current (highest-numbered) version. */
export interface ToolView {
  tool: ToolDoc;
  current: ToolVersionDoc;
  latestVersion: number;
}

/** A tool to attach: a bare tool id pins the tool's current version (api.md "Prompts"). */
export interface ToolSelector {
  toolId: string;
  toolVersionId?: string;
}

export interface ToolVersionInput {
  type?: string;
  configJson?: string;
  inputSchemaJson?: string;
}

/** The document a tool version diff compares (api.md "Version diffs"). */
export function toolVersionDocument(v: ToolVersionDoc): JsonObject {
  return { type: v.type, config: JSON.parse(v.config), inputSchema: JSON.parse(v.inputSchema) };
}

/**
 * Resolves tool selectors of organization `organizationId` to pins. A tool of another organization
 * does not exist for the caller: 404 with the offending field in the details.
 */
export async function resolveToolPins(
  deps: CatalogDeps,
  organizationId: string,
  field: string,
  selectors: readonly ToolSelector[],
): Promise<ToolPin[]> {
  const c = deps.collections;
  const issues = new Issues();
  selectors.forEach((s, i) => {
    if (s.toolId === "") issues.add(fieldPath(fieldPath(field, i), "toolId"), "is required");
  });
  issues.throwIfAny();
  const missing: FieldIssue[] = [];
  const pins = await Promise.all(
    selectors.map(async (s, i): Promise<ToolPin | undefined> => {
      const at = fieldPath(field, i);
      const tool = await c.tools.findOne({ _id: s.toolId });
      if (!tool || tool.organizationId !== organizationId) {
        missing.push({ field: fieldPath(at, "toolId"), issue: `tool ${s.toolId} not found` });
        return undefined;
      }
      const version = s.toolVersionId
        ? await c.toolVersions.findOne({ _id: s.toolVersionId, toolId: tool._id })
        : await c.toolVersions.findOne({ toolId: tool._id }, { sort: { version: -1 } });
      if (!version) {
        missing.push({ field: fieldPath(at, "toolVersionId"), issue: `tool version ${s.toolVersionId} not found` });
        return undefined;
      }
      return { toolId: tool._id, toolVersionId: version._id, toolKey: tool.toolKey };
    }),
  );
  if (missing.length > 0) {
    missing.sort((a, b) => a.field.localeCompare(b.field));
    throw new DomainError("not_found", missing.length === 1 ? "tool not found" : "tools not found", missing);
  }
  return pins.filter((p): p is ToolPin => p !== undefined);
}

/** Checks a tool version's content (type, config, input schema), as creating one does. */
export function checkToolVersion(
  issues: Issues,
  deps: CatalogDeps,
  organizationId: string,
  type: string,
  config: string,
  inputSchema: string,
) {
  if (!isToolType(type)) issues.add("type", `must be one of ${TOOL_TYPES.join(", ")}`);
  if (config === "") issues.add("config", "is required");
  else {
    const parsed = parseJsonText(issues, "config", config);
    if (parsed !== undefined && isToolType(type)) {
      checkToolConfig(issues, "config", type, parsed, { allowlist: deps.httpAllowlist, organizationId });
    }
  }
  if (inputSchema === "") issues.add("inputSchema", "is required");
  else {
    const parsed = parseJsonText(issues, "inputSchema", inputSchema);
    if (parsed !== undefined) checkJsonSchema(issues, "inputSchema", parsed, { objectType: true });
  }
}

export type Tools = ReturnType<typeof createTools>;

/** The tool use cases (docs/concepts.md "Tool", api.md "Tools"). */
export function createTools(deps: CatalogDeps) {
  const family = familyStores(deps).tool;
  const resource = versionedResource(deps, family);

  async function currentVersion(toolId: string): Promise<ToolVersionDoc> {
    const current = await family.versions.findOne({ toolId }, { sort: { version: -1 } });
    // Version 1 is inserted before its tool, so a visible tool always has one.
    if (!current) throw new Error(`tool ${toolId} has no version`);
    return current;
  }

  async function viewOf(tool: ToolDoc): Promise<ToolView> {
    const current = await currentVersion(tool._id);
    return { tool, current, latestVersion: current.version };
  }

  return {
    async createTool(
      principal: Principal,
      input: {
        organizationId: string;
        toolKey: string;
        name: string;
        description: string;
        type: string;
        configJson: string;
        inputSchemaJson: string;
      },
    ): Promise<ToolView> {
      const issues = new Issues();
      if (!TOOL_KEY_PATTERN.test(input.toolKey)) issues.add("toolKey", "must be 1 to 64 letters, digits, _ or -");
      const base = await resource.newParent(
        principal,
        input,
        (issues) =>
          checkToolVersion(issues, deps, input.organizationId, input.type, input.configJson, input.inputSchemaJson),
        issues,
      );
      const tool: ToolDoc = { ...base, toolKey: input.toolKey };
      const version: ToolVersionDoc = {
        _id: newId(family.ids.version),
        toolId: tool._id,
        organizationId: tool.organizationId,
        version: 1,
        ...toolContent(input.type, input.configJson, input.inputSchemaJson),
        createdAt: tool.createdAt,
        createdBy: authorOf(principal),
      };
      // The version first: a tool is never visible without one. The unique index on
      // (organizationId, toolKey) decides a clash, also between concurrent creations.
      await family.versions.insertOne(version);
      try {
        await family.parents.insertOne(tool);
      } catch (e) {
        await family.versions.deleteOne({ _id: version._id });
        if (isDuplicateKeyError(e)) {
          throw alreadyExists(`a tool with toolKey "${input.toolKey}" exists in this organization`, [
            { field: "toolKey", issue: "is taken" },
          ]);
        }
        throw e;
      }
      return { tool, current: version, latestVersion: 1 };
    },

    async getTool(principal: Principal, input: { id: string }): Promise<ToolView> {
      return viewOf(await resource.parentFor(principal, input.id, family.read));
    },

    async listTools(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      await deps.access.inOrganization(principal, input.organizationId, family.read);
      const page = await findPage(family.parents, { organizationId: input.organizationId }, input);
      return { items: await Promise.all(page.items.map(viewOf)), nextCursor: page.nextCursor };
    },

    async updateTool(
      principal: Principal,
      input: { id: string; name?: string; description?: string },
    ): Promise<ToolView> {
      return viewOf(await resource.update(principal, input));
    },

    /** A full snapshot (omitted fields copied from the current version) that becomes current. */
    async createToolVersion(
      principal: Principal,
      input: ToolVersionInput & { toolId: string; message?: string },
    ): Promise<ToolVersionDoc> {
      const tool = await resource.parentFor(principal, input.toolId, family.write);
      const current = await currentVersion(tool._id);
      const type = input.type ?? current.type;
      const config = input.configJson ?? current.config;
      const inputSchema = input.inputSchemaJson ?? current.inputSchema;
      const issues = new Issues();
      checkToolVersion(issues, deps, tool.organizationId, type, config, inputSchema);
      const message = checkChangeMessage(issues, input.message ?? "");
      issues.throwIfAny();
      const content = toolContent(type, config, inputSchema);
      return resource.insertVersion(principal, tool, (head) => ({ ...head, toolId: tool._id, ...content }), {
        message,
      });
    },

    async diffToolVersions(
      principal: Principal,
      input: { toolId: string; versionId: string; againstVersionId: string },
    ): Promise<VersionDiffView> {
      return resource.diff(principal, { parentId: input.toolId, ...input }, toolVersionDocument);
    },
  };
}

/** A checked tool version's content. */
const toolContent = (type: string, config: string, inputSchema: string) => ({
  type: type as ToolType,
  config,
  inputSchema,
});
