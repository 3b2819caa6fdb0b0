/**
 * Annotation queues (docs/review.md): a name, a score set, an optional auto-add rule, and the
 * progress of their items. API keys read with `evaluations:read` and change with
 * `evaluations:write`; users as members. Another organization's queue is not found.
 */
import { invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { LIMITS } from "@kiln/kit/limits";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { type Access, SCOPES } from "../access.js";
import { autoAddTargetIssues, type TargetReader } from "./auto-add-targets.js";
import type { AutoAddRuleDoc, QueueDoc, ReviewCollections } from "./review-store.js";
import { type AutoAddInput, checkAutoAdd, checkScoreConfigs, type ScoreConfigInput } from "./scores.js";

export interface ReviewerProgress {
  reviewerId: string;
  inReview: number;
  completed: number;
  skipped: number;
}

export interface QueueProgress {
  pending: number;
  inReview: number;
  completed: number;
  skipped: number;
  reviewers: ReviewerProgress[];
}

export interface QueueView {
  queue: QueueDoc;
  progress?: QueueProgress;
}

export interface QueueDeps {
  collections: ReviewCollections;
  access: Access;
  /** Where an auto-add rule's target is checked (auto-add-targets.ts). */
  targets: TargetReader;
  now: () => Date;
  /** Told when an organization's queues changed, before the change is answered (domain/org-cache.ts). */
  changed?: (organizationId: string) => void | Promise<void>;
}

const WHAT = "annotation queue";

function checkText(name: string | undefined, description: string | undefined) {
  const issues = [];
  if (name !== undefined && (name.trim() === "" || name.length > LIMITS.nameChars))
    issues.push({ field: "name", issue: `must be 1 to ${LIMITS.nameChars} characters` });
  if (description !== undefined && description.length > LIMITS.descriptionChars)
    issues.push({ field: "description", issue: `must be at most ${LIMITS.descriptionChars} characters` });
  return issues;
}

export function createQueues(deps: QueueDeps) {
  const c = deps.collections;

  /** The queue as the caller may see it (`write`: change it); missing or elsewhere: not found. */
  async function queueFor(principal: Principal, id: string, write: boolean): Promise<QueueDoc> {
    const queue = id === "" ? null : await c.queues.findOne({ _id: id });
    if (!queue) throw notFound(WHAT);
    await deps.access.onResource(
      principal,
      queue.organizationId,
      write ? SCOPES.evaluationsWrite : SCOPES.evaluationsRead,
      WHAT,
    );
    return queue;
  }

  /**
   * Counts per status and per reviewer; an in_review item whose lease ended counts as pending. The
   * pending items (most of a large queue's, until it is reviewed) are counted, not read.
   */
  async function progressOf(queue: QueueDoc): Promise<QueueProgress> {
    const now = deps.now().getTime();
    const [pending, items] = await Promise.all([
      c.items.countDocuments({ queueId: queue._id, status: "pending" }),
      c.items.find(
        { queueId: queue._id, status: { $ne: "pending" } },
        { projection: { status: 1, assignee: 1, leaseUntil: 1 } },
      ),
    ]);
    const p: QueueProgress = { pending, inReview: 0, completed: 0, skipped: 0, reviewers: [] };
    const reviewers = new Map<string, ReviewerProgress>();
    for (const item of items) {
      const lapsed = item.status === "in_review" && (item.leaseUntil?.getTime() ?? 0) <= now;
      const status = lapsed ? "pending" : item.status;
      if (status === "pending") {
        p.pending++;
        continue;
      }
      const r = reviewers.get(item.assignee) ?? { reviewerId: item.assignee, inReview: 0, completed: 0, skipped: 0 };
      reviewers.set(item.assignee, r);
      const key = status === "in_review" ? "inReview" : status;
      p[key]++;
      r[key]++;
    }
    p.reviewers = [...reviewers.values()].sort((a, b) => a.reviewerId.localeCompare(b.reviewerId));
    return p;
  }

  /** Once the caller is authorized in the organization: the rule's target must be of its kind and there. */
  async function checkTarget(organizationId: string, rule: AutoAddRuleDoc | undefined) {
    if (!rule) return;
    const issues = await autoAddTargetIssues(deps.targets, organizationId, rule, "autoAdd");
    if (issues.length > 0) throw invalidArgument("invalid annotation queue", issues);
  }

  const withProgress = async (queue: QueueDoc): Promise<QueueView> => ({ queue, progress: await progressOf(queue) });

  return {
    queueFor,
    async createQueue(
      principal: Principal,
      input: {
        organizationId: string;
        name: string;
        description: string;
        scoreConfigs: ScoreConfigInput[];
        autoAdd?: AutoAddInput;
      },
    ): Promise<QueueView> {
      const organizationId =
        input.organizationId || (principal.type === "user" ? "" : (principal.organizationId ?? ""));
      const issues = checkText(input.name, input.description);
      if (organizationId === "") issues.push({ field: "organizationId", issue: "is required" });
      const scores = checkScoreConfigs(input.scoreConfigs, "scoreConfigs");
      const rule = input.autoAdd ? checkAutoAdd(input.autoAdd, "autoAdd") : undefined;
      issues.push(...scores.issues, ...(rule?.issues ?? []));
      if (issues.length > 0) throw invalidArgument("invalid annotation queue", issues);
      await deps.access.onResource(principal, organizationId, SCOPES.evaluationsWrite, "organization");
      await checkTarget(organizationId, rule?.rule);
      const at = deps.now();
      const queue: QueueDoc = {
        _id: newId("anq"),
        organizationId,
        name: input.name.trim(),
        description: input.description,
        scoreConfigs: scores.configs,
        autoAdd: rule?.rule ?? null,
        createdAt: at,
        createdBy: principal.id,
        updatedAt: at,
      };
      await c.queues.insertOne(queue);
      await deps.changed?.(organizationId);
      return withProgress(queue);
    },

    async getQueue(principal: Principal, input: { id: string }): Promise<QueueView> {
      return withProgress(await queueFor(principal, input.id, false));
    },

    async listQueues(principal: Principal, input: { organizationId: string; limit: number; cursor: string }) {
      const organizationId =
        input.organizationId || (principal.type === "user" ? "" : (principal.organizationId ?? ""));
      if (organizationId === "")
        throw invalidArgument("organizationId is required", [{ field: "organizationId", issue: "is required" }]);
      await deps.access.onResource(principal, organizationId, SCOPES.evaluationsRead, "organization");
      return findPage(c.queues, { organizationId }, input);
    },

    async updateQueue(
      principal: Principal,
      input: {
        id: string;
        name?: string;
        description?: string;
        scoreConfigs?: ScoreConfigInput[];
        autoAdd?: AutoAddInput | null;
      },
    ): Promise<QueueView> {
      const issues = checkText(input.name, input.description);
      const scores = input.scoreConfigs ? checkScoreConfigs(input.scoreConfigs, "scoreConfigs") : undefined;
      const rule = input.autoAdd ? checkAutoAdd(input.autoAdd, "autoAdd") : undefined;
      issues.push(...(scores?.issues ?? []), ...(rule?.issues ?? []));
      if (issues.length > 0) throw invalidArgument("invalid annotation queue", issues);
      const queue = await queueFor(principal, input.id, true);
      await checkTarget(queue.organizationId, rule?.rule);
      const set: Partial<QueueDoc> = {
        updatedAt: deps.now(),
        ...(input.name !== undefined && { name: input.name.trim() }),
        ...(input.description !== undefined && { description: input.description }),
        ...(scores && { scoreConfigs: scores.configs }),
        ...(input.autoAdd !== undefined && { autoAdd: rule?.rule ?? null }),
      };
      const updated = await c.queues.findOneAndUpdate({ _id: queue._id }, { $set: set });
      if (!updated) throw notFound(WHAT);
      await deps.changed?.(queue.organizationId);
      return withProgress(updated);
    },

    /** Deletes the queue and its items (evaluation cases made from them stay). */
    async deleteQueue(principal: Principal, input: { id: string }): Promise<QueueView> {
      const queue = await queueFor(principal, input.id, true);
      if ((await c.queues.deleteOne({ _id: queue._id })).deletedCount === 0) throw notFound(WHAT);
      await deps.changed?.(queue.organizationId);
      await c.items.deleteMany({ queueId: queue._id });
      await c.transitions.deleteMany({ queueId: queue._id });
      return { queue };
    },
  };
}

export type Queues = ReturnType<typeof createQueues>;
