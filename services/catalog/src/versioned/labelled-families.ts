/**
 * The families a label can point into (prompts, skills, agents), as labels see them: where their
 * resources and versions are kept, the scopes that read and write them, the cache to forget on a
 * move, and the publish use case a move of `production` to a draft runs: the labelled rows of the
 * family table (families.ts). Labels depend on this, never on the family modules themselves.
 */
import { invalidArgument } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";
import type { Collection } from "@kiln/kit/store";
import type { Scope } from "../access.js";
import type { CatalogDeps } from "../catalog-deps.js";
import type { LabelKind, VersionStatus } from "../store/catalog-store.js";
import { familyStores } from "./families.js";

export interface AnyVersion {
  _id: string;
  version: number;
  status: VersionStatus;
  organizationId: string;
  createdAt: Date;
  publishedAt: Date | null;
}

export interface AnyParent {
  _id: string;
  organizationId: string;
  /** A prompt's labels' response-cache defaults (label-cache-ttl.ts). */
  labelCacheTtlSeconds?: Record<string, number>;
}

/** Publishes one version with the family's own checks. */
export type PublishVersion = (principal: Principal, parentId: string, versionId: string) => Promise<unknown>;

/** How each kind of labelled resource is stored, authorized and published. */
export interface LabelledFamily {
  parents: Collection<AnyParent>;
  versions: Collection<AnyVersion>;
  parentField: string;
  read: Scope;
  write: Scope;
  forget: (parentId: string) => void;
  publish: PublishVersion;
}

type Publish<K extends string> = (principal: Principal, input: Record<K | "versionId", string>) => Promise<unknown>;

/** The publish use cases moving production to a draft calls (each with its own checks). */
export interface Publishers {
  prompts: { publishPromptVersion: Publish<"promptId"> };
  skills: { publishSkillVersion: Publish<"skillId"> };
  agents: { publishAgentVersion: Publish<"agentId"> };
}

const KINDS: readonly LabelKind[] = ["prompt", "skill", "agent"];

/** The labelled rows of the family table (families.ts), each with its publish use case. */
export function labelledFamilies(deps: CatalogDeps, publishers: Publishers): Record<LabelKind, LabelledFamily> {
  const stores = familyStores(deps);
  const publish: Record<LabelKind, PublishVersion> = {
    prompt: (principal, promptId, versionId) =>
      publishers.prompts.publishPromptVersion(principal, { promptId, versionId }),
    skill: (principal, skillId, versionId) => publishers.skills.publishSkillVersion(principal, { skillId, versionId }),
    agent: (principal, agentId, versionId) => publishers.agents.publishAgentVersion(principal, { agentId, versionId }),
  };
  const labelled = (kind: LabelKind): LabelledFamily => {
    const { parents, versions, parentField, read, write, forgetLive } = stores[kind];
    return {
      parents: parents as Collection<AnyParent>,
      versions: versions as unknown as Collection<AnyVersion>,
      parentField,
      read,
      write,
      forget: forgetLive ?? (() => {}),
      publish: publish[kind],
    };
  };
  return { prompt: labelled("prompt"), skill: labelled("skill"), agent: labelled("agent") };
}

/** The family of `kind`, or invalid argument when it is no labelled kind. */
export function labelledFamilyOf(
  families: Record<LabelKind, LabelledFamily>,
  kind: string,
): LabelledFamily & { kind: LabelKind } {
  if (!(KINDS as readonly string[]).includes(kind)) {
    throw invalidArgument("invalid kind", [{ field: "kind", issue: 'must be "prompt", "skill" or "agent"' }]);
  }
  return { ...families[kind as LabelKind], kind: kind as LabelKind };
}
