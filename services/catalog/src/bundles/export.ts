/**
 * Export reads every prompt, tool, skill and agent with their versions and labels, oldest first, so
 * an import that creates them in bundle order gives an organization whose export is the same bundle
 * with other ids.
 */
import type { BundleAgent, BundlePrompt, BundleSkill, BundleTool, BundleToolPin } from "@kiln/contracts/bundle";
import { BUNDLE_FORMAT } from "@kiln/contracts/bundle";
import { PRODUCTION } from "@kiln/contracts/labels";
import type { Principal } from "@kiln/kit/principal";
import { SCOPES, type Scope } from "../access.js";
import type { CatalogDeps } from "../catalog-deps.js";
import type { ToolPin } from "../domain/tool-pins.js";
import { livePublishedVersion, type VersionLike } from "../domain/versions.js";
import type { LabelDoc, LabelKind } from "../store/catalog-store.js";
import { type CatalogBundle, iso, json } from "./shared.js";

/** Every scope asked of identity at once. */
export async function authorize(
  deps: CatalogDeps,
  principal: Principal,
  organizationId: string,
  scopes: readonly Scope[],
) {
  await Promise.all(scopes.map((scope) => deps.access.inOrganization(principal, organizationId, scope)));
}

export function createExport(deps: CatalogDeps) {
  const c = deps.collections;
  async function labelsOf(organizationId: string) {
    const docs = await c.labels.find({ organizationId });
    const byParent = new Map<string, LabelDoc[]>();
    for (const l of docs) {
      const key = `${l.kind}/${l.parentId}`;
      byParent.set(key, [...(byParent.get(key) ?? []), l]);
    }
    return (kind: LabelKind, parentId: string, versions: readonly VersionLike[]) => {
      const labels: Record<string, number> = {};
      const live = livePublishedVersion(versions);
      if (live) labels[PRODUCTION] = live.version;
      for (const l of (byParent.get(`${kind}/${parentId}`) ?? []).sort((a, b) => a.label.localeCompare(b.label))) {
        const v = versions.find((x) => x._id === l.versionId);
        if (v) labels[l.label] = v.version;
      }
      return labels;
    };
  }

  function group<T extends Record<K, string>, K extends string>(docs: T[], key: K): Map<string, T[]> {
    const map = new Map<string, T[]>();
    for (const d of docs) map.set(d[key], [...(map.get(d[key]) ?? []), d]);
    return map;
  }

  async function exportBundle(principal: Principal, input: { organizationId: string }): Promise<CatalogBundle> {
    const organizationId = input.organizationId;
    await authorize(deps, principal, organizationId, [
      SCOPES.toolsRead,
      SCOPES.promptsRead,
      SCOPES.skillsRead,
      SCOPES.agentsRead,
    ]);
    const byId = { sort: { _id: 1 } } as const;
    const byVersion = { sort: { version: 1 } } as const;
    const [tools, toolVersions, prompts, promptVersions, skills, skillVersions, agents, agentVersions, labelsFor] =
      await Promise.all([
        c.tools.find({ organizationId }, byId),
        c.toolVersions.find({ organizationId }, byVersion),
        c.prompts.find({ organizationId }, byId),
        c.promptVersions.find({ organizationId }, byVersion),
        c.skills.find({ organizationId }, byId),
        c.skillVersions.find({ organizationId }, byVersion),
        c.agents.find({ organizationId }, byId),
        c.agentVersions.find({ organizationId }, byVersion),
        labelsOf(organizationId),
      ]);
    const tv = group(toolVersions, "toolId");
    const pv = group(promptVersions, "promptId");
    const sv = group(skillVersions, "skillId");
    const av = group(agentVersions, "agentId");
    const pins = (list: ToolPin[]): BundleToolPin[] =>
      list.map((p) => ({ toolId: p.toolId, toolVersionId: p.toolVersionId, toolKey: p.toolKey }));
    const times = (v: { status: "draft" | "published"; createdAt: Date; publishedAt: Date | null }) => ({
      status: v.status,
      createdAt: v.createdAt.toISOString(),
      publishedAt: iso(v.publishedAt),
    });
    /** What every labelled thing of the bundle starts with. */
    const head = (
      kind: LabelKind,
      d: { _id: string; name: string; description: string; createdAt: Date },
      versions: readonly VersionLike[],
    ) => ({
      id: d._id,
      name: d.name,
      description: d.description,
      createdAt: d.createdAt.toISOString(),
      labels: labelsFor(kind, d._id, versions),
    });
    return {
      format: BUNDLE_FORMAT,
      exportedAt: deps.now().toISOString(),
      tools: tools.map(
        (t): BundleTool => ({
          id: t._id,
          toolKey: t.toolKey,
          name: t.name,
          description: t.description,
          createdAt: t.createdAt.toISOString(),
          versions: (tv.get(t._id) ?? []).map((v) => ({
            id: v._id,
            version: v.version,
            type: v.type,
            config: json(v.config),
            inputSchema: json(v.inputSchema),
            createdAt: v.createdAt.toISOString(),
          })),
        }),
      ),
      prompts: prompts.map((p): BundlePrompt => {
        const versions = pv.get(p._id) ?? [];
        return {
          ...head("prompt", p, versions),
          defaultModel: p.defaultModel,
          versions: versions.map((v) => ({
            id: v._id,
            version: v.version,
            ...times(v),
            systemPrompt: v.systemPrompt,
            ...(v.messages && v.messages.length > 0 && { messages: v.messages.map((m) => ({ ...m })) }),
            developerPrompt: v.developerPrompt,
            variablesSchema: json(v.variablesSchema),
            responseFormat: json(v.responseFormat),
            temperature: v.temperature,
            maxOutputTokens: v.maxOutputTokens,
            ...(v.cacheTtlSeconds !== undefined && { cacheTtlSeconds: v.cacheTtlSeconds }),
            model: v.model,
            tools: pins(v.tools),
          })),
        };
      }),
      skills: skills.map((s): BundleSkill => {
        const versions = sv.get(s._id) ?? [];
        return {
          ...head("skill", s, versions),
          versions: versions.map((v) => ({
            id: v._id,
            version: v.version,
            ...times(v),
            promptComposition: [...v.promptComposition]
              .sort((a, b) => a.order - b.order)
              .map((step) => ({
                alias: step.alias,
                promptId: step.promptId,
                promptVersionId: step.promptVersionId,
                variables: json(step.variables),
              })),
            tools: pins(v.tools),
          })),
          evaluationCases: [],
        };
      }),
      agents: agents.map((a): BundleAgent => {
        const versions = av.get(a._id) ?? [];
        return {
          ...head("agent", a, versions),
          versions: versions.map((v) => ({ id: v._id, version: v.version, ...times(v), workflow: json(v.workflow) })),
        };
      }),
    };
  }

  // ---------------------------------------------------------------- import: planning

  return exportBundle;
}
