import { includeOf } from "@kiln/contracts/partials";
import { describe, expect, it } from "vitest";
import {
  describeProblem,
  type IncludedVersion,
  type IncludeLookup,
  includeIssue,
  MAX_INCLUDE_DEPTH,
  unresolvedOf,
  walkIncludes,
} from "./prompt-includes.js";

/** Prompts by name, each with its versions by label: what `includes` each version has. */
type World = Record<string, Record<string, string[]>>;

/** A lookup over `world` (ids `prm_<name>`), counting its reads. */
function lookupOf(world: World): IncludeLookup & { reads: number } {
  const lookup = (async ({ name, label }) => {
    lookup.reads++;
    const labels = world[name];
    if (!labels) return { missing: `no prompt is named "${name}"` };
    const includes = labels[label];
    if (!includes) return { missing: `the prompt "${name}" has no label "${label}"` };
    const found: IncludedVersion = {
      promptId: `prm_${name}`,
      versionId: `pv_${name}_${label}`,
      version: 1,
      template: `<${name}@${label}>`,
      includes: includes.map(includeOf),
    };
    return found;
  }) as IncludeLookup & { reads: number };
  lookup.reads = 0;
  return lookup;
}

const root = (name: string) => ({ promptId: `prm_${name}`, name });
const walk = (world: World, name: string, includes: string[]) =>
  walkIncludes(root(name), includes.map(includeOf), lookupOf(world));

describe("includeOf", () => {
  it("reads production for a bare name and the last @ as the label", () => {
    expect(includeOf("a")).toEqual({ name: "a", label: "production" });
    expect(includeOf("team/a@staging")).toEqual({ name: "team/a", label: "staging" });
    expect(includeOf("me@example.com@latest")).toEqual({ name: "me@example.com", label: "latest" });
    expect(includeOf("@x")).toEqual({ name: "@x", label: "production" });
    expect(includeIssue("a@Bad")).toMatch(/label "Bad"/);
    expect(includeIssue("a@staging")).toBeUndefined();
  });
});

describe("walkIncludes", () => {
  it("resolves every include once, through the prompts included, at their labels", async () => {
    const world: World = {
      b: { production: ["c", "d@staging"] },
      c: { production: ["d@staging"] },
      d: { staging: [], production: ["c"] },
    };
    const lookup = lookupOf(world);
    const found = await walkIncludes(root("a"), ["b", "c"].map(includeOf), lookup);
    expect(found.problem).toBeUndefined();
    expect(found.missing).toBeUndefined();
    expect([...found.resolved.values()].map((r) => r.version.versionId)).toEqual([
      "pv_b_production",
      "pv_c_production",
      "pv_d_staging",
    ]);
    expect(lookup.reads).toBe(3);
  });

  it("finds a cycle back to the root and names it", async () => {
    // The root is a prompt like any other: its name is looked up as it stands now.
    const found = await walk({ a: { production: [] }, b: { production: ["a"] } }, "a", ["b"]);
    expect(found.problem).toEqual({ kind: "cycle", path: ["a", "b", "a"], first: includeOf("b") });
    expect(describeProblem(found.problem!)).toEqual({
      message: "the includes make a cycle: a -> b -> a",
      issue: "makes a cycle of includes: a -> b -> a",
    });
    // At another label of the root too: a prompt never includes itself.
    const viaLabel = await walk({ a: { staging: [] }, b: { staging: ["c"] }, c: { production: ["a@staging"] } }, "a", [
      "b@staging",
    ]);
    expect(viaLabel.problem?.path).toEqual(["a", "b@staging", "c", "a@staging"]);
    // At a label the root does not have: still itself.
    const missingLabel = walkIncludes(root("a"), [includeOf("a@nope")], async () => ({
      missing: "no label",
      promptId: "prm_a",
    }));
    expect((await missingLabel).problem?.path).toEqual(["a", "a@nope"]);
    // A cycle below the root, among prompts it includes.
    const below = await walk({ b: { production: ["c"] }, c: { production: ["b"] } }, "a", ["b"]);
    expect(below.problem?.path).toEqual(["a", "b", "c", "b"]);
    expect(unresolvedOf(below)).toEqual({ reference: "b", message: "the includes make a cycle: a -> b -> c -> b" });
  });

  it(`allows ${MAX_INCLUDE_DEPTH} levels of includes and refuses one more`, async () => {
    const chain = (n: number): World =>
      Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`p${i + 1}`, { production: i + 1 < n ? [`p${i + 2}`] : [] }]),
      );
    expect((await walk(chain(MAX_INCLUDE_DEPTH), "a", ["p1"])).problem).toBeUndefined();
    const deep = await walk(chain(MAX_INCLUDE_DEPTH + 1), "a", ["p1"]);
    expect(deep.problem).toMatchObject({ kind: "depth", path: ["a", "p1", "p2", "p3", "p4", "p5", "p6"] });
    expect(describeProblem(deep.problem!).message).toBe(
      `the includes nest deeper than ${MAX_INCLUDE_DEPTH}: a -> p1 -> p2 -> p3 -> p4 -> p5 -> p6`,
    );
    // A chain walked once already counts again where it is met deeper.
    const world = { ...chain(MAX_INCLUDE_DEPTH), x: { production: ["p1"] } };
    expect((await walk(world, "a", ["p1", "x"])).problem?.path).toEqual(["a", "x", "p1", "p2", "p3", "p4", "p5"]);
  });

  it("notes the first include that stands for nothing and walks on", async () => {
    const found = await walk({ b: { production: ["gone", "c@nope"] }, c: { production: [] } }, "a", ["b"]);
    expect(found.problem).toBeUndefined();
    expect(found.missing).toEqual({ include: includeOf("gone"), reason: 'no prompt is named "gone"' });
    expect(unresolvedOf(found)).toEqual({
      reference: "gone",
      message: 'the partial {{> gone}} does not resolve: no prompt is named "gone"',
    });
    expect(unresolvedOf(await walk({}, "a", ["c@nope"]))?.reference).toBe("c@nope");
  });

  it("walks a wide diamond of includes in one read per include", async () => {
    const world: World = { top: { production: ["l", "r"] }, l: { production: ["m"] }, r: { production: ["m"] } };
    for (let i = 0; i < 30; i++) world[`m${i}`] = { production: [] };
    world.m = { production: Array.from({ length: 30 }, (_, i) => `m${i}`) };
    const lookup = lookupOf(world);
    const found = await walkIncludes(root("a"), [includeOf("top")], lookup);
    expect(found.problem).toBeUndefined();
    expect(lookup.reads).toBe(34);
  });
});
