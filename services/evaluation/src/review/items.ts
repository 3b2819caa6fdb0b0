/**
 * The items of annotation queues (docs/review.md): added by hand or by rule, leased one at a time
 * to a reviewer (a member acting as a user), reviewed, skipped or released, and turned into an
 * evaluation case. A lease is taken with one findOneAndUpdate filtered on status and lease: two
 * reviewers asking at once never get the same item, and an item whose lease ended is back in the pool.
 */
import {
  DomainError,
  type FieldIssue,
  failedPrecondition,
  invalidArgument,
  notFound,
  permissionDenied,
} from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { LIMITS } from "@kiln/kit/limits";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { isDuplicateKeyError } from "@kiln/kit/store";
import type { Cases } from "../cases.js";
import type { ContentReader, ItemContent } from "./item-content.js";
import type { Queues } from "./queues.js";
import type { ItemDoc, ItemStatus, QueueDoc, ReviewCollections, ScoreDoc } from "./review-store.js";
import { checkScores } from "./scores.js";

/** How long a claimed item stays with its reviewer (docs/review.md "Claiming"). */
export const DEFAULT_LEASE_MS = 10 * 60_000;
export const MAX_ITEMS_PER_ADD = LIMITS.itemsPerAdd;
const STATUSES: ItemStatus[] = ["pending", "in_review", "completed", "skipped"];

export interface ItemDeps {
  collections: ReviewCollections;
  queues: Queues;
  content: ContentReader;
  cases: Cases;
  now: () => Date;
  leaseMs: number;
}

export interface ItemWithContent {
  item: ItemDoc;
  content?: ItemContent;
}

export type Target = { type: "run" | "trace"; id: string };

/** The case's issues named as this request's fields: `cases[0].expectedOutput` is `expectedOutput`. */
async function casesRenamed<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (e) {
    if (!(e instanceof DomainError) || e.kind !== "invalid_argument") throw e;
    const details = e.details.map((d) => ({ ...d, field: d.field.replace(/^cases\[0\]\.?/, "") || "itemId" }));
    throw invalidArgument(e.message, details);
  }
}

/** Reviewing is a member's: an API key or a service reads and adds, it does not review. */
function reviewerOf(principal: Principal): string {
  if (principal.type !== "user") throw permissionDenied("only members signed in as themselves review items");
  return principal.id;
}

export function createItems(deps: ItemDeps) {
  const c = deps.collections;

  async function itemOf(queue: QueueDoc, itemId: string): Promise<ItemDoc> {
    const item = itemId === "" ? null : await c.items.findOne({ _id: itemId, queueId: queue._id });
    if (!item) throw notFound("queue item");
    return item;
  }

  /** Adds targets checked already; one the queue holds is counted, not added again. */
  async function insertTargets(queue: QueueDoc, targets: Target[], addedBy: string) {
    const added: ItemDoc[] = [];
    let skipped = 0;
    const at = deps.now();
    for (const t of targets) {
      const item: ItemDoc = {
        _id: newId("ani"),
        queueId: queue._id,
        organizationId: queue.organizationId,
        targetType: t.type,
        targetId: t.id,
        targetKey: `${queue._id}/${t.type}/${t.id}`,
        status: "pending",
        addedBy,
        addedAt: at,
        assignee: "",
        leaseUntil: null,
        review: null,
      };
      try {
        await c.items.insertOne(item);
        added.push(item);
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
        skipped++;
      }
    }
    return { items: added, skipped };
  }

  /** The item, if `principal` holds it, moved by `set`; else 409 (another reviewer holds it, or it is done). */
  async function asHolder(principal: Principal, queueId: string, itemId: string, set: Partial<ItemDoc>) {
    const reviewer = reviewerOf(principal);
    const queue = await deps.queues.queueFor(principal, queueId, false);
    return moveHeld(queue, reviewer, itemId, set);
  }

  async function moveHeld(queue: QueueDoc, reviewer: string, itemId: string, set: Partial<ItemDoc>) {
    const item = await itemOf(queue, itemId);
    const moved = await c.items.findOneAndUpdate(
      { _id: item._id, queueId: queue._id, status: "in_review", assignee: reviewer },
      { $set: set },
    );
    if (!moved)
      throw failedPrecondition(
        item.status === "in_review" && item.assignee !== reviewer
          ? "another reviewer holds this item"
          : `the item is ${item.status.replace("_", " ")}, not held by you: take it with next first`,
      );
    return moved;
  }

  return {
    insertTargets,

    /** Every run and trace is checked to exist in the queue's organization before any is added. */
    async addItems(principal: Principal, input: { queueId: string; runIds: string[]; traceIds: string[] }) {
      const queue = await deps.queues.queueFor(principal, input.queueId, true);
      const runIds = [...new Set(input.runIds)];
      const traceIds = [...new Set(input.traceIds)];
      if (runIds.length + traceIds.length === 0)
        throw invalidArgument("nothing to add", [{ field: "runIds", issue: "name at least one run or trace" }]);
      if (runIds.length + traceIds.length > MAX_ITEMS_PER_ADD)
        throw invalidArgument("too many items", [{ field: "runIds", issue: `at most ${MAX_ITEMS_PER_ADD} at once` }]);
      const org = queue.organizationId;
      const [runs, traces] = await Promise.all([
        Promise.all(runIds.map((id) => (id === "" ? undefined : deps.content.run(org, id)))),
        Promise.all(traceIds.map((id) => (id === "" ? undefined : deps.content.trace(org, id)))),
      ]);
      const issues: FieldIssue[] = [
        ...runIds.flatMap((id, i) =>
          runs[i] ? [] : [{ field: `runIds[${i}]`, issue: `no run "${id}" in this organization` }],
        ),
        ...traceIds.flatMap((id, i) =>
          traces[i] ? [] : [{ field: `traceIds[${i}]`, issue: `no trace "${id}" in this organization` }],
        ),
      ];
      if (issues.length > 0) throw invalidArgument("some runs or traces do not exist", issues);
      const targets: Target[] = [
        ...runIds.map((id) => ({ type: "run" as const, id })),
        ...traceIds.map((id) => ({ type: "trace" as const, id })),
      ];
      return insertTargets(queue, targets, principal.type === "service" ? `service:${principal.id}` : principal.id);
    },

    async listItems(principal: Principal, input: { queueId: string; status: string; limit: number; cursor: string }) {
      if (input.status !== "" && !STATUSES.includes(input.status as ItemStatus))
        throw invalidArgument("invalid status", [{ field: "status", issue: `must be one of ${STATUSES.join(", ")}` }]);
      const queue = await deps.queues.queueFor(principal, input.queueId, false);
      return findPage(c.items, { queueId: queue._id, ...(input.status && { status: input.status }) }, input);
    },

    async getItem(principal: Principal, input: { queueId: string; itemId: string }): Promise<ItemWithContent> {
      const queue = await deps.queues.queueFor(principal, input.queueId, false);
      const item = await itemOf(queue, input.itemId);
      return { item, content: await deps.content.contentOf(item) };
    },

    /** The caller's own item in review (its lease renewed), else the oldest item free to take; none: {}. */
    async claimNext(principal: Principal, input: { queueId: string }): Promise<Partial<ItemWithContent>> {
      const reviewer = reviewerOf(principal);
      const queue = await deps.queues.queueFor(principal, input.queueId, false);
      const now = deps.now();
      const leaseUntil = new Date(now.getTime() + deps.leaseMs);
      const lease = { $set: { status: "in_review", assignee: reviewer, leaseUntil } };
      const item =
        (await c.items.findOneAndUpdate(
          { queueId: queue._id, status: "in_review", assignee: reviewer, leaseUntil: { $gt: now } },
          lease,
          { sort: { _id: 1 } },
        )) ??
        (await c.items.findOneAndUpdate(
          { queueId: queue._id, $or: [{ status: "pending" }, { status: "in_review", leaseUntil: { $lte: now } }] },
          lease,
          { sort: { _id: 1 } },
        ));
      if (!item) return {};
      return { item, content: await deps.content.contentOf(item) };
    },

    async submitReview(
      principal: Principal,
      input: { queueId: string; itemId: string; scores: ScoreDoc[]; comment: string },
    ) {
      const reviewerId = reviewerOf(principal);
      const queue = await deps.queues.queueFor(principal, input.queueId, false);
      const checked = checkScores(queue.scoreConfigs, input.scores, input.comment);
      if (checked.issues.length > 0) throw invalidArgument("invalid review", checked.issues);
      const review = { scores: checked.scores, comment: input.comment, reviewerId, reviewedAt: deps.now() };
      return moveHeld(queue, reviewerId, input.itemId, { status: "completed", review, leaseUntil: null });
    },

    async skipItem(principal: Principal, input: { queueId: string; itemId: string }) {
      return asHolder(principal, input.queueId, input.itemId, { status: "skipped", leaseUntil: null });
    },

    async releaseItem(principal: Principal, input: { queueId: string; itemId: string }) {
      return asHolder(principal, input.queueId, input.itemId, { status: "pending", assignee: "", leaseUntil: null });
    },

    /**
     * An evaluation case on `skillId` made of the item's run: its input (a skill run's `input`, a
     * prompt run's `variables`, an agent run's `inputs`) and, when given, the corrected output as
     * the expected output. The case is created as the caller (evaluations:write on the skill).
     */
    async createCase(
      principal: Principal,
      input: { queueId: string; itemId: string; skillId: string; expectedOutputJson?: string },
    ) {
      reviewerOf(principal);
      const queue = await deps.queues.queueFor(principal, input.queueId, false);
      const item = await itemOf(queue, input.itemId);
      if (item.targetType !== "run")
        throw invalidArgument("only a run's item becomes an evaluation case", [
          { field: "itemId", issue: "is a trace" },
        ]);
      const run = await deps.content.run(queue.organizationId, item.targetId);
      if (!run) throw failedPrecondition("the item's run no longer exists");
      const sent = run.input ? (JSON.parse(run.input.json) as Record<string, unknown>) : {};
      const caseInput = sent.input ?? sent.variables ?? sent.inputs ?? {};
      const [created] = await casesRenamed(
        deps.cases.createCases(principal, {
          organizationId: queue.organizationId,
          skillId: input.skillId,
          cases: [
            {
              name: `review ${item._id}`,
              inputJson: JSON.stringify(caseInput),
              ...(input.expectedOutputJson !== undefined && { expectedOutputJson: input.expectedOutputJson }),
            },
          ],
        }),
      );
      if (!created) throw new Error("no case was created");
      const updated = await c.items.findOneAndUpdate(
        { _id: item._id },
        { $set: { evaluationCaseId: created._id, evaluationCaseSkillId: created.skillId } },
      );
      return { item: updated ?? item, caseId: created._id };
    },
  };
}

export type Items = ReturnType<typeof createItems>;
