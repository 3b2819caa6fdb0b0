/**
 * How an item moves from one state to the next when several processes race (docs/review.md
 * "Claiming"): the mover inserts the transition `<item id>:<seq + 1>`, and only the one whose insert
 * succeeds writes the item's new state (with `leaseSeq` seq + 1). A loser sees the key taken and
 * moves on. A transition whose item write never came (its process died in between) is stepped over
 * once a lease's length has passed, so the item is never stuck.
 */
import { isDuplicateKeyError } from "@kiln/kit/store";
import type { ItemDoc, ReviewCollections, TransitionDoc } from "./review-store.js";

export interface Transitions {
  /** Moves `item` (as read) to `set`, as `by`; the item as moved, or null when another mover came first. */
  move(item: ItemDoc, by: string, kind: TransitionDoc["kind"], set: Partial<ItemDoc>): Promise<ItemDoc | null>;
}

export function createTransitions(c: ReviewCollections, now: () => Date, leaseMs: number): Transitions {
  return {
    async move(item, by, kind, set) {
      const seq = item.leaseSeq + 1;
      const _id = `${item._id}:${seq}`;
      try {
        await c.transitions.insertOne({ _id, itemId: item._id, queueId: item.queueId, seq, by, kind, at: now() });
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
        const taken = await c.transitions.findOne({ _id });
        if (taken && taken.at.getTime() + leaseMs < now().getTime()) {
          // Its mover never wrote the item: step the item past it (every repairer writes the same).
          await c.items.updateOne({ _id: item._id, leaseSeq: item.leaseSeq }, { $set: { leaseSeq: seq } });
        }
        return null;
      }
      const moved = { ...set, leaseSeq: seq };
      await c.items.updateOne({ _id: item._id }, { $set: moved });
      return { ...item, ...moved };
    },
  };
}
