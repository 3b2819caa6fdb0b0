/**
 * The items of annotation queues (docs/review.md): added by hand or by rule, leased one at a time
 * to a reviewer (a member acting as a user), reviewed, skipped or released, and turned into an
 * evaluation case. Every move of an item is a transition (transitions.ts) only one caller wins:
 * two reviewers asking at once never get the same item, and an item whose lease ended is back in the pool.
 */
import { type FieldIssue, failedPrecondition, invalidArgument, notFound } from "@kiln/kit/errors";
import { newId } from "@kiln/kit/ids";
import { LIMITS } from "@kiln/kit/limits";
import { findPage } from "@kiln/kit/pagination";
import type { Principal } from "@kiln/kit/principal";
import { isDuplicateKeyError } from "@kiln/kit/store";
import type { Cases } from "../cases.js";
import type { ContentReader, ItemContent } from "./item-content.js";
import type { Queues } from "./queues.js";
import type { ItemDoc, ItemStatus, QueueDoc, ReviewCollections, ScoreDoc, TransitionDoc } from "./review-store.js";
import { casesRenamed, reviewerOf } from "./reviewer.js";
import { checkScores } from "./scores.js";
import type { Transitions } from "./transitions.js";

/** How long a claimed item stays with its reviewer (docs/review.md "Claiming"). */
export const DEFAULT_LEASE_MS = 10 * 60_000;
export const MAX_ITEMS_PER_ADD = LIMITS.itemsPerAdd;
const STATUSES: ItemStatus[] = ["pending", "in_review", "completed", "skipped"];

export interface ItemDeps {
  collections: ReviewCollections;
  transitions: Transitions;
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
        leaseSeq: 0,
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
  async function asHolder(
    principal: Principal,
    queueId: string,
    itemId: string,
    kind: TransitionDoc["kind"],
    set: Partial<ItemDoc>,
  ) {
    const reviewer = reviewerOf(principal);
    const queue = await deps.queues.queueFor(principal, queueId, false);
    return moveHeld(queue, reviewer, itemId, kind, set);
  }

  async function moveHeld(
    queue: QueueDoc,
    reviewer: string,
    itemId: string,
    kind: TransitionDoc["kind"],
    set: Partial<ItemDoc>,
  ) {
    const item = await itemOf(queue, itemId);
    const held = item.status === "in_review" && item.assignee === reviewer;
    // Another reviewer may have taken it since its lease ended: then the transition is theirs.
    const moved = held ? await deps.transitions.move(item, reviewer, kind, set) : null;
    if (!moved)
      throw failedPrecondition(
        item.status === "in_review"
          ? "another reviewer holds this item"
          : `the item is ${item.status.replace("_", " ")}, not held by you: take it with next first`,
      );
    return moved;
  }

  /** Records the case on the item, as a transition that keeps its state (a review racing it goes first). */
  async function linkCase(item: ItemDoc, by: string, link: Partial<ItemDoc>): Promise<ItemDoc> {
    let current: ItemDoc | null = item;
    for (let attempt = 0; current && attempt < 5; attempt++) {
      const moved = await deps.transitions.move(current, by, "case", link);
      if (moved) return moved;
      current = await c.items.findOne({ _id: item._id });
    }
    throw failedPrecondition("the item kept changing: the case was created, try recording it again");
  }

  /** The oldest item free to take (pending, or its lease ended), leased to `reviewer`; null when none is left. */
  async function takeFree(queue: QueueDoc, reviewer: string, now: Date, leaseUntil: Date): Promise<ItemDoc | null> {
    const tried: string[] = [];
    for (;;) {
      const free = await c.items.find(
        {
          queueId: queue._id,
          ...(tried.length > 0 && { _id: { $nin: tried } }),
          $or: [{ status: "pending" }, { status: "in_review", leaseUntil: { $lte: now } }],
        },
        { sort: { _id: 1 }, limit: 10 },
      );
      if (free.length === 0) return null;
      for (const item of free) {
        const taken = await deps.transitions.move(item, reviewer, "claim", {
          status: "in_review",
          assignee: reviewer,
          leaseUntil,
        });
        if (taken) return taken;
        tried.push(item._id);
      }
    }
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
      // The caller's own item first, its lease renewed (a transition too: the item has one writer at a time).
      const own = await c.items.findOne(
        { queueId: queue._id, status: "in_review", assignee: reviewer, leaseUntil: { $gt: now } },
        { sort: { _id: 1 } },
      );
      const renewed = own && (await deps.transitions.move(own, reviewer, "claim", { leaseUntil }));
      const item = renewed || (await takeFree(queue, reviewer, now, leaseUntil));
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
      return moveHeld(queue, reviewerId, input.itemId, "completed", { status: "completed", review, leaseUntil: null });
    },

    async skipItem(principal: Principal, input: { queueId: string; itemId: string }) {
      return asHolder(principal, input.queueId, input.itemId, "skipped", { status: "skipped", leaseUntil: null });
    },

    async releaseItem(principal: Principal, input: { queueId: string; itemId: string }) {
      return asHolder(principal, input.queueId, input.itemId, "released", {
        status: "pending",
        assignee: "",
        leaseUntil: null,
      });
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
      const link = { evaluationCaseId: created._id, evaluationCaseSkillId: created.skillId };
      const updated = await linkCase(item, principal.id, link);
      return { item: updated, caseId: created._id };
    },
  };
}

export type Items = ReturnType<typeof createItems>;
