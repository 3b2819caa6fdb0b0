/**
 * `ListLabels` for many parents at once (`parentIds`) answers what one call per parent answers,
 * on the embedded store (SQLite) and on FerretDB, in a bounded number of store reads.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Principal } from "@kiln/kit/principal";
import type { Collection, Doc, Store } from "@kiln/kit/store";
import { createMongoStore } from "@kiln/kit/store/mongo";
import { createSqliteStore } from "@kiln/kit/store/sqlite";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestCatalog, ORG_A, ORG_B, principals, rejectionOf, snapshotOf } from "../test/test-catalog.js";
import { labelMoveDoc } from "./versioned/label-moves.js";

const { userA, userB, userMember, keyA, keyARunner } = principals;
const url = inject("mongoUrl");
const database = `catalog_labels_${Date.now()}`;
let dir = "";

/** The store with every read counted, by collection. */
function counted(store: Store) {
  const reads = new Map<string, number>();
  const count = (name: string) => reads.set(name, (reads.get(name) ?? 0) + 1);
  const wrapped: Store = {
    ...store,
    collection<T extends Doc>(name: string): Collection<T> {
      const c = store.collection<T>(name);
      return {
        ...c,
        name: c.name,
        insertOne: (doc) => c.insertOne(doc),
        insertMany: (docs) => c.insertMany(docs),
        findOne: (filter, options) => {
          count(name);
          return c.findOne(filter, options);
        },
        find: (filter, options) => {
          count(name);
          return c.find(filter, options);
        },
        countDocuments: (filter) => c.countDocuments(filter),
        updateOne: (filter, update, options) => c.updateOne(filter, update, options),
        updateMany: (filter, update) => c.updateMany(filter, update),
        findOneAndUpdate: (filter, update, options) => c.findOneAndUpdate(filter, update, options),
        replaceOne: (filter, doc, options) => c.replaceOne(filter, doc, options),
        deleteOne: (filter) => c.deleteOne(filter),
        deleteMany: (filter) => c.deleteMany(filter),
      };
    },
    ensureIndexes: (collection, indexes) => store.ensureIndexes(collection, indexes),
    ping: () => store.ping(),
    close: () => store.close(),
  };
  return { store: wrapped, reads, total: () => [...reads.values()].reduce((a, b) => a + b, 0) };
}

const backends: [string, () => Promise<Store>][] = [
  ["SQLite", async () => createSqliteStore({ path: join(dir, "store.db") })],
  ["FerretDB", async () => createMongoStore({ url, database, appName: "catalog-labels-test" })],
];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kiln-labels-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  const admin = new MongoClient(url);
  try {
    await admin.db(database).dropDatabase();
  } finally {
    await admin.close();
  }
});

describe.each(backends)("ListLabels with parentIds, on %s", (_name, open) => {
  let store: Store;
  let reads: ReturnType<typeof counted>;
  let catalog: Awaited<ReturnType<typeof createTestCatalog>>;
  const prompts: string[] = [];
  const skills: string[] = [];

  const newPrompt = async (name: string, versions: number, publish: number[], by: Principal = userA) => {
    const { prompt } = await catalog.prompts.createPrompt(userA, { organizationId: ORG_A, name, description: "" });
    const ids: string[] = [];
    for (let i = 0; i < versions; i++) {
      const v = await catalog.prompts.createPromptVersion(userA, {
        promptId: prompt._id,
        systemPrompt: `v${i}`,
        tools: [],
      });
      ids.push(v._id);
    }
    for (const n of publish) {
      await catalog.prompts.publishPromptVersion(by, { promptId: prompt._id, versionId: ids[n] ?? "" });
    }
    prompts.push(prompt._id);
    return { id: prompt._id, versions: ids };
  };
  const setLabel = (principal: Principal, parentId: string, label: string, versionId: string) =>
    catalog.labels.setLabel(principal, { kind: "prompt", parentId, label, versionId });
  const onePerParent = async (kind: string, ids: string[]) =>
    (await Promise.all(ids.map((parentId) => catalog.labels.listLabels(userA, { kind, parentId })))).flat();

  beforeAll(async () => {
    store = await open();
    reads = counted(store);
    catalog = await createTestCatalog({ store: reads.store });
    // Published twice (by a key the second time): production is the second, moved by the key.
    await newPrompt("twice", 2, [0, 1], keyA);
    // A draft only: latest, no production.
    const draft = await newPrompt("draft", 1, []);
    await setLabel(userA, draft.id, "canary", draft.versions[0] ?? "");
    // No version at all: no label.
    await newPrompt("empty", 0, []);
    // Production moved back to version 1, and stored labels moved by two members.
    const back = await newPrompt("back", 3, [0, 1]);
    await setLabel(userA, back.id, "production", back.versions[0] ?? "");
    await setLabel(userMember, back.id, "canary", back.versions[2] ?? "");
    await setLabel(userA, back.id, "beta", back.versions[1] ?? "");
    // The last production move points at another version than the live one (a move recorded,
    // its version change lost): the live version's mover is then unknown, as for one parent.
    const lost = await newPrompt("lost", 2, [0]);
    await catalog.collections.labelMoves.insertOne(
      labelMoveDoc({
        organizationId: ORG_A,
        kind: "prompt",
        parentId: lost.id,
        label: "production",
        versionId: lost.versions[1] ?? "",
        version: 2,
        previousVersionId: lost.versions[0] ?? "",
        action: "moved",
        at: new Date(),
        by: "usr_ghost",
      }),
    );
    for (let i = 0; i < 55; i++) {
      const p = await newPrompt(`filler-${i}`, 1 + (i % 2), i % 3 === 0 ? [] : [0]);
      if (i % 4 === 0) await setLabel(userA, p.id, `l${i}`, p.versions[0] ?? "");
    }
    for (const name of ["trip", "plan"]) {
      const view = await catalog.skills.createSkill(userA, { organizationId: ORG_A, name, description: "" });
      await catalog.labels.setLabel(userA, {
        kind: "skill",
        parentId: view.skill._id,
        label: "canary",
        versionId: view.described._id,
      });
      skills.push(view.skill._id);
    }
  });

  afterAll(async () => {
    await store.close();
  });

  it("answers each parent's labels as one call per parent does, parent after parent", async () => {
    const ids = [...prompts].reverse();
    const many = await catalog.labels.listLabels(userA, { kind: "prompt", parentId: "", parentIds: ids });
    expect(many).toEqual(await onePerParent("prompt", ids));
    const of = (i: number) => many.filter((l) => l.parentId === prompts[i]);
    expect(of(0).map((l) => [l.label, l.version, l.updatedBy])).toEqual([
      ["production", 2, keyA.id],
      ["latest", 2, ""],
    ]);
    expect(of(1).map((l) => l.label)).toEqual(["latest", "canary"]);
    expect(of(2)).toEqual([]);
    expect(of(3).map((l) => [l.label, l.version, l.updatedBy, l.protected])).toEqual([
      ["production", 1, userA.id, true],
      ["latest", 3, "", false],
      ["beta", 2, userA.id, false],
      ["canary", 3, userMember.id, false],
    ]);
    expect(of(4).map((l) => [l.label, l.version, l.updatedBy])).toEqual([
      ["production", 1, ""],
      ["latest", 2, ""],
    ]);
    const skillLabels = await catalog.labels.listLabels(userA, { kind: "skill", parentId: "", parentIds: skills });
    expect(skillLabels).toEqual(await onePerParent("skill", skills));
    expect(skillLabels.map((l) => l.label)).toEqual(["latest", "canary", "latest", "canary"]);
  });

  it("reads the store a bounded number of times, whatever the number of parents", async () => {
    const ids = prompts.slice(0, 60);
    const before = reads.total();
    await catalog.labels.listLabels(userA, { kind: "prompt", parentId: "", parentIds: ids });
    // The parents, their versions, their labels, the moves to the live versions, any later moves.
    expect(reads.total() - before).toBeLessThanOrEqual(5);
    const one = reads.total();
    await onePerParent("prompt", ids);
    expect(reads.total() - one).toBe(ids.length * 4);
  });

  it("answers a repeated id once", async () => {
    const [a, b] = prompts;
    const many = await catalog.labels.listLabels(userA, {
      kind: "prompt",
      parentId: "",
      parentIds: [a, b, a] as string[],
    });
    expect(many).toEqual(await onePerParent("prompt", [a, b] as string[]));
  });

  it("refuses bad input, a parent of another organization and a caller who may not read, changing nothing", async () => {
    const before = await snapshotOf(catalog.collections);
    const list = (principal: Principal, input: { parentId?: string; parentIds: string[] }) =>
      rejectionOf(catalog.labels.listLabels(principal, { kind: "prompt", parentId: "", ...input }));
    const tooMany = await list(userA, { parentIds: Array.from({ length: 101 }, (_, i) => `prm_${i}`) });
    expect([tooMany.kind, tooMany.details]).toEqual([
      "invalid_argument",
      [{ field: "parentIds", issue: "holds at most 100 ids" }],
    ]);
    const both = await list(userA, { parentId: prompts[0], parentIds: prompts.slice(1, 2) });
    expect([both.kind, both.details[0]?.field]).toEqual(["invalid_argument", "parentIds"]);
    const empty = await list(userA, { parentIds: [prompts[0] ?? "", ""] });
    expect([empty.kind, empty.details[0]?.field]).toEqual(["invalid_argument", "parentIds"]);
    const kind = await rejectionOf(
      catalog.labels.listLabels(userA, { kind: "tool", parentId: "", parentIds: prompts.slice(0, 1) }),
    );
    expect([kind.kind, kind.details[0]?.field]).toEqual(["invalid_argument", "kind"]);
    expect((await list(userA, { parentIds: [prompts[0] ?? "", "prm_missing"] })).kind).toBe("not_found");
    // A skill id is no prompt.
    expect((await list(userA, { parentIds: [prompts[0] ?? "", skills[0] ?? ""] })).kind).toBe("not_found");
    const { prompt: other } = await catalog.prompts.createPrompt(userB, {
      organizationId: ORG_B,
      name: "theirs",
      description: "",
    });
    expect((await list(userA, { parentIds: [prompts[0] ?? "", other._id] })).kind).toBe("not_found");
    expect((await list(userB, { parentIds: prompts.slice(0, 2) })).kind).toBe("not_found");
    // As one call per parent refuses it.
    const runner = await list(keyARunner, { parentIds: prompts.slice(0, 2) });
    const alone = await rejectionOf(
      catalog.labels.listLabels(keyARunner, { kind: "prompt", parentId: prompts[0] ?? "" }),
    );
    expect(runner.kind).toBe(alone.kind);
    const after = await snapshotOf(catalog.collections);
    expect({ ...after, prompts: after.prompts?.filter((p) => (p as { _id: string })._id !== other._id) }).toEqual(
      before,
    );
  });
});
