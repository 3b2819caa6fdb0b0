import type { Bundle, BundleTool } from "@kiln/contracts/bundle";
import { LIMITS } from "@kiln/kit/limits";
import { fieldPath } from "../../domain/issues.js";
import { TOOL_KEY_PATTERN, type ToolType } from "../../domain/tool-config.js";
import type { ToolDoc, ToolVersionDoc } from "../../store/catalog-store.js";
import { checkToolVersion } from "../../tools.js";
import type { PlanContext } from "./context.js";

/** Plans the bundle's tools: each checked, matched to a tool here by id or import map, or created. */
export async function planTools(ctx: PlanContext, bundle: Bundle): Promise<void> {
  const { deps, c, p, organizationId, at, issues, toolKeys, sub, checkNumbering, existing, matchVersions } = ctx;
  const { conflict, mapNew, keepId, insert } = ctx;
  // Tools
  for (const [i, t] of bundle.tools.entries()) {
    const field = fieldPath("tools", i);
    if (!TOOL_KEY_PATTERN.test(t.toolKey))
      issues.add(fieldPath(field, "toolKey"), "must be 1 to 64 letters, digits, _ or -");
    sub(field, (s) => {
      s.text("name", t.name);
      s.text("description", t.description, { min: 0, max: LIMITS.descriptionChars, lines: true });
    });
    checkNumbering(fieldPath(field, "versions"), t.versions);
    for (const [j, v] of t.versions.entries()) {
      sub(fieldPath(fieldPath(field, "versions"), j), (s) =>
        checkToolVersion(s, deps, organizationId, v.type, JSON.stringify(v.config), JSON.stringify(v.inputSchema)),
      );
    }
    const item = { kind: "tool" as const, sourceId: t.id, name: t.name };
    const here = await existing<ToolDoc>("tools", t.id);
    if (!here) {
      const clash = await c.tools.findOne({ organizationId, toolKey: t.toolKey });
      if (clash) {
        conflict(
          field,
          item,
          `the tool key ${t.toolKey} is taken here by ${clash._id}, which this bundle did not make`,
          t.versions,
        );
        continue;
      }
      const id = mapNew(t.id, "tool");
      toolKeys.set(id, t.toolKey);
      insert("tools", {
        _id: id,
        organizationId,
        toolKey: t.toolKey,
        name: t.name.trim(),
        description: t.description.trim(),
        createdAt: new Date(t.createdAt),
        updatedAt: at,
      } satisfies ToolDoc);
      for (const v of t.versions) insert("toolVersions", toolVersionDoc(mapNew(v.id, "tv"), id, v));
      p.items.push({ ...item, id, outcome: "created" });
      continue;
    }
    keepId(t.id, here._id);
    toolKeys.set(here._id, here.toolKey);
    const stored = await c.toolVersions.find({ toolId: here._id }, { sort: { version: 1 } });
    const m = await matchVersions(stored, t.versions);
    if (m.conflict) {
      conflict(field, item, m.conflict, t.versions);
      continue;
    }
    for (const [n, v] of m.keep) keepId(t.versions[n - 1]?.id ?? "", v._id);
    for (const n of m.create) {
      const v = t.versions[n - 1];
      if (v) insert("toolVersions", toolVersionDoc(mapNew(v.id, "tv"), here._id, v));
    }
    p.items.push({
      ...item,
      id: here._id,
      outcome: m.create.length > 0 ? "updated" : "skipped",
      ...(m.create.length > 0 && { detail: `${m.create.length} new version(s)` }),
    });
  }

  function toolVersionDoc(id: string, toolId: string, v: BundleTool["versions"][number]): ToolVersionDoc {
    return {
      _id: id,
      toolId,
      organizationId,
      version: v.version,
      type: v.type as ToolType,
      config: JSON.stringify(v.config),
      inputSchema: JSON.stringify(v.inputSchema),
      createdAt: new Date(v.createdAt),
    };
  }
}
