/**
 * Online evaluation rules (docs/observability.md "Online evaluation"): create, list, read, change
 * and delete, each authorized in the rule's organization (reads `evaluations:read`, changes
 * `evaluations:write`); another organization's rule is not found. Bad input is refused whole.
 */
import { type FieldIssue, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { LIMITS } from "@kiln/kit/limits";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { type Access, SCOPES } from "../access.js";
import { checkAssertionList } from "../domain/assertion-list.js";
import {
  type OnlineCollections,
  type OnlineRuleDoc,
  TARGET_KINDS,
  type TargetKind,
  type TraceFilterDoc,
} from "./online-store.js";

export interface RuleTargetInput {
  kind: string;
  id: string;
  label: string;
  filter?: { name: string; model: string; sessionId: string };
}

export interface NewRuleInput {
  organizationId: string;
  name: string;
  target: RuleTargetInput | undefined;
  sampleRate: number;
  /** Assertions as JSON values (their messages read by the RPC layer). */
  assertions: unknown[];
  enabled?: boolean;
}

export interface RuleChanges {
  id: string;
  name?: string;
  sampleRate?: number;
  enabled?: boolean;
  assertions?: unknown[];
}

const ID_PREFIX: Record<Exclude<TargetKind, "traces">, string> = { prompt: "prm", skill: "skl", agent: "agt" };
const LABEL = /^[a-z][a-z0-9-]{0,39}$/;
const MAX_FILTER_CHARS = 256;

function nameIssues(name: string): FieldIssue[] {
  if (name.trim() === "") return [{ field: "name", issue: "is required" }];
  if (name.length > LIMITS.nameChars)
    return [{ field: "name", issue: `must be at most ${LIMITS.nameChars} characters` }];
  return [];
}

function rateIssues(rate: number): FieldIssue[] {
  return Number.isFinite(rate) && rate > 0 && rate <= 1
    ? []
    : [{ field: "sampleRate", issue: "must be a number greater than 0 and at most 1" }];
}

function targetOf(t: RuleTargetInput | undefined, issues: FieldIssue[]): OnlineRuleDoc["target"] | undefined {
  if (!t) {
    issues.push({ field: "target", issue: "is required" });
    return undefined;
  }
  if (!(TARGET_KINDS as readonly string[]).includes(t.kind)) {
    issues.push({ field: "target.kind", issue: `must be one of ${TARGET_KINDS.join(", ")}` });
    return undefined;
  }
  const kind = t.kind as TargetKind;
  if (kind === "traces") {
    if (t.id !== "") issues.push({ field: "target.id", issue: "is not allowed for traces" });
    if (t.label !== "") issues.push({ field: "target.label", issue: "is not allowed for traces" });
    const filter: TraceFilterDoc = {
      name: t.filter?.name ?? "",
      model: t.filter?.model ?? "",
      sessionId: t.filter?.sessionId ?? "",
    };
    for (const [key, value] of Object.entries(filter)) {
      if (value.length > MAX_FILTER_CHARS)
        issues.push({ field: `target.filter.${key}`, issue: `must be at most ${MAX_FILTER_CHARS} characters` });
    }
    return { kind, id: "", label: "", filter };
  }
  if (!new RegExp(`^${ID_PREFIX[kind]}_[0-9a-f]{32}$`).test(t.id))
    issues.push({ field: "target.id", issue: `must be a ${kind} id (${ID_PREFIX[kind]}_…)` });
  if (t.label !== "" && !LABEL.test(t.label))
    issues.push({ field: "target.label", issue: "must be a label name (lowercase letters, digits, -)" });
  if (t.filter && (t.filter.name || t.filter.model || t.filter.sessionId))
    issues.push({ field: "target.filter", issue: "is only for traces" });
  return { kind, id: t.id, label: t.label, filter: null };
}

const refuse = (issues: FieldIssue[]) => {
  if (issues.length > 0) throw invalidArgument("invalid online rule", issues);
};

export function createOnlineRules(
  c: OnlineCollections,
  access: Access,
  now: () => Date,
  /** Told when an organization's rules changed, before the change is answered (domain/org-cache.ts). */
  changed: (organizationId: string) => void | Promise<void> = () => {},
) {
  async function ruleFor(principal: Principal, id: string, write: boolean): Promise<OnlineRuleDoc> {
    const rule = id === "" ? null : await c.rules.findOne({ _id: id });
    if (!rule) throw notFound("online rule");
    await access.onResource(
      principal,
      rule.organizationId,
      write ? SCOPES.evaluationsWrite : SCOPES.evaluationsRead,
      "online rule",
    );
    return rule;
  }

  const requireOrganization = (organizationId: string) => {
    if (organizationId === "")
      throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
  };

  return {
    async create(principal: Principal, input: NewRuleInput): Promise<OnlineRuleDoc> {
      requireOrganization(input.organizationId);
      await access.onResource(principal, input.organizationId, SCOPES.evaluationsWrite, "organization");
      const issues = [...nameIssues(input.name)];
      const target = targetOf(input.target, issues);
      issues.push(...rateIssues(input.sampleRate));
      const assertions = checkAssertionList(input.assertions, issues);
      refuse(issues);
      const at = now();
      const rule: OnlineRuleDoc = {
        _id: newId("olr"),
        organizationId: input.organizationId,
        name: input.name.trim(),
        target: target as OnlineRuleDoc["target"],
        sampleRate: input.sampleRate,
        assertions,
        enabled: input.enabled ?? true,
        createdBy: principal.id,
        createdAt: at,
        updatedAt: at,
      };
      await c.rules.insertOne(rule);
      await changed(rule.organizationId);
      return rule;
    },

    async list(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      requireOrganization(input.organizationId);
      await access.onResource(principal, input.organizationId, SCOPES.evaluationsRead, "organization");
      return findPage(c.rules, { organizationId: input.organizationId }, input);
    },

    get: (principal: Principal, id: string) => ruleFor(principal, id, false),

    async update(principal: Principal, changes: RuleChanges): Promise<OnlineRuleDoc> {
      const rule = await ruleFor(principal, changes.id, true);
      const issues: FieldIssue[] = [];
      if (changes.name !== undefined) issues.push(...nameIssues(changes.name));
      if (changes.sampleRate !== undefined) issues.push(...rateIssues(changes.sampleRate));
      const assertions = changes.assertions === undefined ? undefined : checkAssertionList(changes.assertions, issues);
      refuse(issues);
      const set: Partial<OnlineRuleDoc> = { updatedAt: now() };
      if (changes.name !== undefined) set.name = changes.name.trim();
      if (changes.sampleRate !== undefined) set.sampleRate = changes.sampleRate;
      if (changes.enabled !== undefined) set.enabled = changes.enabled;
      if (assertions !== undefined) set.assertions = assertions;
      const updated = (await c.rules.findOneAndUpdate({ _id: rule._id }, { $set: set })) ?? { ...rule, ...set };
      await changed(rule.organizationId);
      return updated;
    },

    async delete(principal: Principal, id: string): Promise<OnlineRuleDoc> {
      const rule = await ruleFor(principal, id, true);
      await c.rules.deleteOne({ _id: rule._id });
      await changed(rule.organizationId);
      return rule;
    },
  };
}

export type OnlineRules = ReturnType<typeof createOnlineRules>;
