import { createMemoryStore } from "@kiln/kit/store/memory";
import { describe, expect, it } from "vitest";
import { type ItemDoc, reviewCollections } from "./review-store.js";
import { createTransitions } from "./transitions.js";

const LEASE_MS = 60_000;

async function setUp() {
  const c = reviewCollections(createMemoryStore());
  let at = new Date("2026-11-27T10:00:00Z");
  const transitions = createTransitions(c, () => at, LEASE_MS);
  const item: ItemDoc = {
    _id: "ani_1",
    queueId: "anq_1",
    organizationId: "org_1",
    targetType: "run",
    targetId: "run_1",
    targetKey: "anq_1/run/run_1",
    status: "pending",
    addedBy: "usr_1",
    addedAt: at,
    assignee: "",
    leaseUntil: null,
    review: null,
    leaseSeq: 0,
  };
  await c.items.insertOne(item);
  return { c, transitions, item, later: (ms: number) => (at = new Date(at.getTime() + ms)) };
}

describe("an item's transitions", () => {
  it("lets one of two movers from the same state win, the other sees it taken", async () => {
    const { c, transitions, item } = await setUp();
    const [a, b] = await Promise.all([
      transitions.move(item, "usr_a", "claim", { status: "in_review", assignee: "usr_a" }),
      transitions.move(item, "usr_b", "claim", { status: "in_review", assignee: "usr_b" }),
    ]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    const winner = (a ?? b) as ItemDoc;
    expect(await c.items.findOne({ _id: item._id })).toMatchObject({
      status: "in_review",
      assignee: winner.assignee,
      leaseSeq: 1,
    });
    // The next move starts from the state the winner wrote.
    const done = await transitions.move(winner, winner.assignee, "completed", { status: "completed" });
    expect(done).toMatchObject({ status: "completed", leaseSeq: 2 });
    expect(await transitions.move(winner, "usr_c", "claim", { status: "in_review" })).toBeNull();
  });

  it("steps over a transition whose item write never came, once a lease's length has passed", async () => {
    const { c, transitions, item, later } = await setUp();
    // A mover that died between its insert and its write: the item still says seq 0.
    await c.transitions.insertOne({
      _id: "ani_1:1",
      itemId: item._id,
      queueId: item.queueId,
      seq: 1,
      by: "usr_dead",
      kind: "claim",
      at: new Date("2026-11-27T10:00:00Z"),
    });
    expect(await transitions.move(item, "usr_a", "claim", { status: "in_review" })).toBeNull();
    expect((await c.items.findOne({ _id: item._id }))?.leaseSeq).toBe(0);
    later(LEASE_MS + 1);
    expect(await transitions.move(item, "usr_a", "claim", { status: "in_review" })).toBeNull();
    const stepped = (await c.items.findOne({ _id: item._id })) as ItemDoc;
    expect(stepped.leaseSeq).toBe(1);
    expect(await transitions.move(stepped, "usr_a", "claim", { status: "in_review" })).toMatchObject({ leaseSeq: 2 });
  });
});
