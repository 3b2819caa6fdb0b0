import type { Collection, Store } from "@kiln/kit/store";

/** Human review's documents (docs/review.md): annotation queues and their items. */

export type ScoreKind = "boolean" | "numeric" | "categorical";

export interface ScoreConfigDoc {
  name: string;
  kind: ScoreKind;
  min?: number;
  max?: number;
  options?: string[];
  required: boolean;
}

export interface AutoAddRuleDoc {
  kind: "prompt" | "skill" | "agent";
  id: string;
  label: string;
  sampleRate: number;
}

export interface QueueDoc {
  _id: string;
  organizationId: string;
  name: string;
  description: string;
  scoreConfigs: ScoreConfigDoc[];
  autoAdd: AutoAddRuleDoc | null;
  createdAt: Date;
  createdBy: string;
  updatedAt: Date;
}

export type ItemStatus = "pending" | "in_review" | "completed" | "skipped";

/** A score as given: a boolean, a number or one of the options. */
export interface ScoreDoc {
  name: string;
  value: boolean | number | string;
}

export interface ReviewDoc {
  scores: ScoreDoc[];
  comment: string;
  reviewerId: string;
  reviewedAt: Date;
}

export interface ItemDoc {
  _id: string;
  queueId: string;
  organizationId: string;
  targetType: "run" | "trace";
  targetId: string;
  /** `${queueId}/${targetType}/${targetId}`: unique, so a target is in a queue once whoever adds it. */
  targetKey: string;
  status: ItemStatus;
  addedBy: string;
  addedAt: Date;
  /** The lease holder while in_review; who completed or skipped it after; "" while pending. */
  assignee: string;
  leaseUntil: Date | null;
  review: ReviewDoc | null;
  /** The number of the item's last transition (leases.ts): 0 until first claimed. */
  leaseSeq: number;
  evaluationCaseId?: string;
  evaluationCaseSkillId?: string;
}

/**
 * One transition of an item (a claim, a review, a skip, a release), `_id` `<item id>:<seq>`: the
 * insert on it is the only operation atomic across processes on every store (FerretDB's
 * findAndModify is not), so one caller alone moves an item from one state to the next.
 */
export interface TransitionDoc {
  _id: string;
  itemId: string;
  queueId: string;
  seq: number;
  by: string;
  kind: "claim" | "completed" | "skipped" | "released" | "case";
  at: Date;
}

export interface ReviewCollections {
  queues: Collection<QueueDoc>;
  items: Collection<ItemDoc>;
  transitions: Collection<TransitionDoc>;
}

export function reviewCollections(store: Store): ReviewCollections {
  return {
    queues: store.collection<QueueDoc>("annotation_queues"),
    items: store.collection<ItemDoc>("annotation_queue_items"),
    transitions: store.collection<TransitionDoc>("annotation_item_transitions"),
  };
}

export async function ensureReviewIndexes(store: Store): Promise<void> {
  await store.ensureIndexes("annotation_queues", [
    // Also what the auto-add consumer reads an organization's rule queues by (auto-add.ts).
    { keys: { organizationId: 1, _id: -1 } },
  ]);
  await store.ensureIndexes("annotation_queue_items", [
    { keys: { targetKey: 1 }, unique: true },
    { keys: { queueId: 1, status: 1, _id: 1 } },
    { keys: { queueId: 1, _id: -1 } },
  ]);
  await store.ensureIndexes("annotation_item_transitions", [{ keys: { queueId: 1 } }]);
}
