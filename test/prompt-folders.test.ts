/**
 * Prompt folders over real HTTP (issue #50, api.md "Folders"), in both run modes: the prompt list
 * filtered by folder (directly in it, or `nested`), paged; `GET /api/prompts/folders` with counts,
 * in path order, paged; names whose segments are empty refused; names that only look alike (a
 * folder's name as a prefix, regex characters) kept apart; and another organization's prompts never
 * listed or counted.
 */
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_MODES, type RunningKiln } from "./support/run-modes.js";

interface Page<T> {
  data: T[];
  nextCursor: string | null;
}
interface Folder {
  path: string;
  name: string;
  parent: string | null;
  promptCount: number;
  nestedPromptCount: number;
  folderCount: number;
}

const NAMES = [
  "root-one",
  "root-two",
  "support/faq",
  "support/billing/refund",
  "support/billing/invoice",
  "support/billing/deep/x",
  "sales/pitch",
  // Not in "support": a name that shares its start, one that sorts beside it.
  "supportive/x",
  "support.old/thing",
  // Regex characters in a folder's name are its own characters.
  "a+b/c",
  "aab/c",
];

describe.each(RUN_MODES)("prompt folders in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let owner: string;
  let org: string;
  let other: string;
  let otherOrg: string;

  const prompts = (query: Record<string, string>, token = owner) =>
    api.get<Page<{ name: string }>>("/api/prompts", { token, query: { organizationId: org, ...query } });
  const names = async (query: Record<string, string>) => {
    const r = await prompts(query);
    expect(r.status, r.text).toBe(200);
    return r.body.data.map((p) => p.name).sort();
  };
  const folders = (query: Record<string, string> = {}, token = owner, organizationId = org) =>
    api.get<Page<Folder>>("/api/prompts/folders", { token, query: { organizationId, ...query } });

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    owner = (await api.signUp()).accessToken;
    org = (await api.onboard(owner)).organization.id;
    other = (await api.signUp()).accessToken;
    otherOrg = (await api.onboard(other)).organization.id;
    for (const name of NAMES) await api.createPrompt(owner, org, { name });
    await api.createPrompt(other, otherOrg, { name: "support/secret" });
    await api.createPrompt(other, otherOrg, { name: "hidden/deep/y" });
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("lists the prompts directly in a folder, or in every folder below it", async () => {
    expect(await names({ folder: "support" })).toEqual(["support/faq"]);
    expect(await names({ folder: "support", nested: "true" })).toEqual([
      "support/billing/deep/x",
      "support/billing/invoice",
      "support/billing/refund",
      "support/faq",
    ]);
    expect(await names({ folder: "support/billing" })).toEqual(["support/billing/invoice", "support/billing/refund"]);
    expect(await names({ folder: "/support/billing/", nested: "false" })).toEqual([
      "support/billing/invoice",
      "support/billing/refund",
    ]);
    // The top level: names without "/".
    expect(await names({ folder: "" })).toEqual(["root-one", "root-two"]);
    expect(await names({ folder: "/" })).toEqual(["root-one", "root-two"]);
    expect(await names({ folder: "a+b" })).toEqual(["a+b/c"]);
    expect(await names({ folder: "nowhere" })).toEqual([]);
    // Without a folder: every prompt, as before; ?name= is one name exactly.
    expect(await names({})).toHaveLength(NAMES.length);
    expect(await names({ name: "support/faq" })).toEqual(["support/faq"]);
  });

  it("pages a folder's prompts newest first, as every list", async () => {
    const first = await prompts({ folder: "support", nested: "true", limit: "3" });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.map((p) => p.name)).toEqual([
      "support/billing/deep/x",
      "support/billing/invoice",
      "support/billing/refund",
    ]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await prompts({
      folder: "support",
      nested: "true",
      limit: "3",
      cursor: first.body.nextCursor ?? "",
    });
    expect(second.body).toMatchObject({ data: [{ name: "support/faq" }], nextCursor: null });
  });

  it("lists the folders with their prompts counted, in path order", async () => {
    const top = await folders();
    expect(top.status, top.text).toBe(200);
    expect(top.body.nextCursor).toBeNull();
    expect(top.body.data).toEqual([
      { path: "a+b", name: "a+b", parent: null, promptCount: 1, nestedPromptCount: 1, folderCount: 0 },
      { path: "aab", name: "aab", parent: null, promptCount: 1, nestedPromptCount: 1, folderCount: 0 },
      { path: "sales", name: "sales", parent: null, promptCount: 1, nestedPromptCount: 1, folderCount: 0 },
      { path: "support", name: "support", parent: null, promptCount: 1, nestedPromptCount: 4, folderCount: 1 },
      { path: "support.old", name: "support.old", parent: null, promptCount: 1, nestedPromptCount: 1, folderCount: 0 },
      { path: "supportive", name: "supportive", parent: null, promptCount: 1, nestedPromptCount: 1, folderCount: 0 },
    ]);
    const inSupport = await folders({ folder: "support" });
    expect(inSupport.body.data).toEqual([
      {
        path: "support/billing",
        name: "billing",
        parent: "support",
        promptCount: 2,
        nestedPromptCount: 3,
        folderCount: 1,
      },
    ]);
    const nested = await folders({ folder: "support", nested: "true" });
    expect(nested.body.data.map((f) => [f.path, f.parent, f.promptCount])).toEqual([
      ["support/billing", "support", 2],
      ["support/billing/deep", "support/billing", 1],
    ]);
    expect((await folders({ folder: "support/billing/deep" })).body.data).toEqual([]);
  });

  it("pages the folders, each page after the last path of the one before", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await folders({ limit: "2", ...(cursor && { cursor }) });
      expect(r.status, r.text).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.data.map((f) => f.path));
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(["a+b", "aab", "sales", "support", "support.old", "supportive"]);
    const bad = await folders({ cursor: "not-a-cursor!" });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: "invalid_argument" } });
  });

  it("keeps each organization's folders to itself", async () => {
    const theirs = await folders({}, other, otherOrg);
    expect(theirs.body.data.map((f) => [f.path, f.nestedPromptCount])).toEqual([
      ["hidden", 1],
      ["support", 1],
    ]);
    const mine = await folders({ folder: "support", nested: "true" });
    expect(JSON.stringify(mine.body)).not.toContain("secret");
    expect(await names({ folder: "support", nested: "true" })).not.toContain("support/secret");
    expect(await names({ folder: "hidden", nested: "true" })).toEqual([]);
    // Another organization's folders and prompts cannot be asked for.
    const foreign = await folders({}, owner, otherOrg);
    expect(foreign.status, foreign.text).toBe(404);
    expect(foreign.body).toMatchObject({ error: { code: "not_found", message: "organization not found" } });
    expect((await prompts({ organizationId: otherOrg, folder: "support" })).status).toBe(404);
    // An API key lists its own organization's folders without naming it.
    const key = await api.createApiKey(owner, org, ["prompts:read"]);
    const byKey = await api.get<Page<Folder>>("/api/prompts/folders", { token: key.key, query: { folder: "support" } });
    expect(byKey.status, byKey.text).toBe(200);
    expect(byKey.body.data.map((f) => f.path)).toEqual(["support/billing"]);
    const noScope = await api.createApiKey(owner, org, ["runs:write"]);
    expect((await api.get("/api/prompts/folders", { token: noScope.key })).status).toBe(403);
  });

  it("refuses names with an empty folder segment, and folders with one", async () => {
    for (const name of ["/lead", "trail/", "double//slash", "a/ /b"]) {
      const r = await api.post<{ error: { details: unknown[] } }>(
        "/api/prompts",
        { organizationId: org, name },
        { token: owner },
      );
      expect(r.status, `${name}: ${r.text}`).toBe(400);
      expect(r.body.error.details).toEqual([
        { field: "name", issue: "has an empty folder segment: no leading, trailing or double /" },
      ]);
    }
    const prompt = await api.createPrompt(owner, org, { name: "movable" });
    const renamed = await api.patch(`/api/prompts/${prompt.id}`, { name: "x//y" }, { token: owner });
    expect(renamed.status, renamed.text).toBe(400);
    // Renaming moves a prompt between folders.
    const moved = await api.patch(`/api/prompts/${prompt.id}`, { name: "sales/movable" }, { token: owner });
    expect(moved.status, moved.text).toBe(200);
    expect(await names({ folder: "sales" })).toEqual(["sales/movable", "sales/pitch"]);
    const bad = await prompts({ folder: "a//b" });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body).toMatchObject({ error: { details: [{ field: "folder" }] } });
    // Bad text in the filters is refused, never a 5xx.
    for (const text of ["a\u0000b", "a\u0001b", "a\nb"]) {
      for (const [path, field] of [
        ["/api/prompts", "folder"],
        ["/api/prompts", "name"],
        ["/api/prompts/folders", "folder"],
      ] as const) {
        const r = await api.get(path, { token: owner, query: { organizationId: org, [field]: text } });
        expect(r.status, `${path}?${field}=${JSON.stringify(text)}: ${r.text}`).toBe(400);
      }
    }
  });
});
