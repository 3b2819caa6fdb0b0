/**
 * `pnpm start` keeps its data (issue #13): the real launcher process on a data directory, stopped
 * cleanly and killed with SIGKILL in the middle of writes, restarted on the same directory, and
 * everything that was acknowledged read back over HTTP. Work in flight at the crash (an evaluation,
 * an asynchronous agent run) is finished or failed with a reason after the restart.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { copyFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createSqliteStore } from "@kiln/kit/store/sqlite";
import { startOpenAIStub } from "@kiln/testing/openai-stub";
import { createTestClient, type Prompt, type TestClient } from "@kiln/testing/test-client";
import Database from "better-sqlite3";
import { open as openLmdb } from "lmdb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, stubProviders } from "./bench/load.js";
import { type KilnProcess, startKilnProcess } from "./support/kiln-process.js";

const SCOPES = ["prompts:read", "prompts:write", "skills:read", "skills:write", "runs:read", "runs:write"];

const started: KilnProcess[] = [];
const dirs: string[] = [];

beforeAll(() => {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
});

afterAll(async () => {
  for (const p of started) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await Promise.all(started.map((p) => p.exited));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "kiln-data-"));
  dirs.push(dir);
  return join(dir, "data");
}

/** `pnpm start`'s own command: the compiled launcher (built once, in beforeAll). */
async function startKiln(dir: string, env: Record<string, string> = {}): Promise<KilnProcess> {
  const running = await startKilnProcess(dir, env, { compiled: true });
  started.push(running);
  return running;
}

async function stop(kiln: KilnProcess, signal: NodeJS.Signals): Promise<number | null> {
  kiln.child.kill(signal);
  return kiln.exited;
}

/** The fields of a stored run this file checks (services/execution/src/store/run-store.ts). */
interface StoredRun {
  _id: string;
  organizationId: string;
  status: string;
  completedAt: Date;
  stepsJson: string;
}

/** A platform on a new data directory, with a member and one prompt named `name`. */
async function platformWithPrompt(name: string) {
  const dir = await dataDir();
  const first = await startKiln(dir);
  const { token, organizationId } = await member(createTestClient(first.base));
  const prompt = await createTestClient(first.base).createPrompt(token, organizationId, { name });
  return { dir, first, token, organizationId, prompt };
}

/** `kiln backup|restore <file>` of the compiled launcher on `dataDir`; its standard output. */
function kilnCommand(command: "backup" | "restore", file: string, dataDir: string): string {
  return execFileSync(process.execPath, [join(ROOT, "launcher/dist/kiln.mjs"), command, file], {
    cwd: ROOT,
    env: { ...process.env, KILN_DATA_DIR: dataDir },
    encoding: "utf8",
    stdio: "pipe",
  });
}

/** Rewrites a stopped platform's directory as data format 1 kept it: the store's key spaces in LMDB. */
async function toFormat1(dir: string) {
  const sqlite = new Database(join(dir, "store.db"), { readonly: true });
  const env = openLmdb({ path: join(dir, "store.mdb"), maxDbs: 8 });
  const docs = env.openDB<Buffer, Buffer>({ name: "docs", encoding: "binary", keyEncoding: "binary" });
  const index = env.openDB<string, Buffer>({ name: "index", encoding: "string", keyEncoding: "binary" });
  const meta = env.openDB<unknown, string>({ name: "meta", encoding: "json" });
  await env.transaction(() => {
    for (const row of sqlite.prepare<[], { k: Buffer; v: Buffer }>("SELECT k, v FROM docs").all()) {
      docs.put(row.k, row.v);
    }
    for (const k of sqlite.prepare<[], Buffer>("SELECT k FROM entries").pluck().all()) index.put(k, "");
    for (const row of sqlite.prepare<[], { k: string; v: string }>("SELECT k, v FROM meta").all()) {
      meta.put(row.k, JSON.parse(row.v));
    }
  });
  sqlite.close();
  await env.close();
  await rm(join(dir, "store.mdb-lock"), { force: true });
  for (const suffix of ["", "-wal", "-shm"]) await rm(join(dir, `store.db${suffix}`), { force: true });
  await writeFile(join(dir, "kiln-data.json"), JSON.stringify({ format: 1 }));
}

async function member(api: TestClient) {
  const email = `user-${randomUUID()}@example.test`;
  const { accessToken: token } = await api.signUp(email);
  const { organization } = await api.onboard(token);
  const key = await api.createApiKey(token, organization.id, SCOPES);
  return { email, token, organizationId: organization.id, apiKey: key.key };
}

/** A published one-prompt skill on `model`; its id. */
async function publishedSkill(api: TestClient, token: string, organizationId: string, model?: string) {
  const { prompt } = await api.createPublishedPrompt(token, organizationId, {
    systemPrompt: "Say hello to {{name}}.",
    variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    ...(model ? { model } : {}),
  });
  const skill = await api.createSkill(token, organizationId, { name: `Greeter ${randomUUID().slice(0, 6)}` });
  await api.replaceSkillPrompts(token, skill.draftVersionId ?? "", [{ promptId: prompt.id }]);
  await api.publishSkill(token, skill.id);
  return { skillId: skill.id, promptId: prompt.id };
}

describe("the embedded platform on a data directory", () => {
  it("finds everything after a clean stop and a restart", async () => {
    const dir = await dataDir();
    const first = await startKiln(dir);
    let api = createTestClient(first.base);
    const who = await member(api);
    const { token, organizationId } = who;
    const { prompt, version: v1 } = await api.createPublishedPrompt(token, organizationId, {
      systemPrompt: "Hello {{name}}",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    const v2 = await api.createPromptVersion(token, prompt.id, {
      systemPrompt: "Hi {{name}}",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    const { skillId } = await publishedSkill(api, token, organizationId);
    const skillRun = await api.post<{ id: string }>(
      `/api/skills/${skillId}/run`,
      { organizationId, input: { name: "Ada" } },
      { token },
    );
    expect(skillRun.status, skillRun.text).toBe(201);
    const promptRun = await api.post<{ id: string; output: unknown }>(
      `/api/prompts/${prompt.id}/run`,
      { organizationId, variables: { name: "Ada" } },
      { token: who.apiKey, headers: { "idempotency-key": "first-run" } },
    );
    expect(promptRun.status, promptRun.text).toBe(201);
    expect(await stop(first, "SIGTERM")).toBe(0);

    const second = await startKiln(dir);
    api = createTestClient(second.base);
    // The access token issued before the restart still verifies (the issuer's key was kept).
    const read = await api.get<Prompt>(`/api/prompts/${prompt.id}`, { token });
    expect(read.status, read.text).toBe(200);
    expect(read.body.publishedVersionId).toBe(v1.id);
    expect(read.body.latestVersion).toBe(2);
    expect(read.body.versions.map((v) => v.id).sort()).toEqual([v1.id, v2.id].sort());
    // Signing in and the API key still work.
    expect((await api.token(who.email)).accessToken).toEqual(expect.any(String));
    const verified = await api.post("/api/setup/verify", {}, { token: who.apiKey });
    expect(verified.status, verified.text).toBe(200);
    // Runs are readable with their steps; an idempotency key replays the stored run.
    const skillRunRead = await api.get<{ id: string; status: string; steps: unknown[] }>(
      `/api/skill-runs/${skillRun.body.id}`,
      { token },
    );
    expect(skillRunRead.status, skillRunRead.text).toBe(200);
    expect(skillRunRead.body).toMatchObject({ id: skillRun.body.id, status: "succeeded" });
    expect(skillRunRead.body.steps).toHaveLength(1);
    const replay = await api.post<{ id: string; output: unknown }>(
      `/api/prompts/${prompt.id}/run`,
      { organizationId, variables: { name: "Ada" } },
      { token: who.apiKey, headers: { "idempotency-key": "first-run" } },
    );
    expect(replay.body.id).toBe(promptRun.body.id);
    expect(replay.body.output).toEqual(promptRun.body.output);
    expect(await stop(second, "SIGINT")).toBe(0);
  }, 120_000);

  it("loses no acknowledged write and shows no partial run after SIGKILL in the middle of writes", async () => {
    const dir = await dataDir();
    const first = await startKiln(dir);
    const api = createTestClient(first.base);
    const { token, organizationId } = await member(api);
    const { skillId } = await publishedSkill(api, token, organizationId);

    const acknowledged = { prompts: [] as string[], runs: [] as string[], users: [] as string[] };
    let writing = true;
    const writer = async () => {
      while (writing) {
        await Promise.allSettled([
          api
            .post<{ id: string }>("/api/prompts", { organizationId, name: `p ${randomUUID()}` }, { token })
            .then((r) => {
              if (r.status === 201) acknowledged.prompts.push(r.body.id);
            }),
          api
            .post<{ id: string }>(`/api/skills/${skillId}/run`, { organizationId, input: { name: "Ada" } }, { token })
            .then((r) => {
              if (r.status === 201) acknowledged.runs.push(r.body.id);
            }),
          api.signUp().then((u) => acknowledged.users.push(u.email)),
        ]);
      }
    };
    const writers = Array.from({ length: 8 }, writer);
    // Kill once a good number of writes have been acknowledged, with the writers still going.
    const deadline = Date.now() + 60_000;
    while (acknowledged.runs.length < 40 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    first.child.kill("SIGKILL");
    await first.exited;
    writing = false;
    await Promise.all(writers);

    const second = await startKiln(dir);
    const after = createTestClient(second.base);
    for (const id of acknowledged.prompts) {
      expect((await after.get(`/api/prompts/${id}`, { token })).status, id).toBe(200);
    }
    for (const id of acknowledged.runs) {
      const run = await after.get<{ status: string; steps: unknown[]; output: unknown }>(`/api/skill-runs/${id}`, {
        token,
      });
      expect(run.status, id).toBe(200);
      expect(run.body.status).toBe("succeeded");
      expect(run.body.steps).toHaveLength(1);
    }
    for (const email of acknowledged.users) expect((await after.token(email)).accessToken).toEqual(expect.any(String));
    expect(acknowledged.runs.length).toBeGreaterThanOrEqual(40);
    await stop(second, "SIGTERM");

    // Whatever was not acknowledged is whole or absent: every run in the file, acknowledged or
    // not, is complete (read from the database itself, since no route lists runs).
    const store = createSqliteStore({ path: join(dir, "store.db") });
    try {
      const stored = await store.scope("execution").collection<StoredRun>("runs").find({ organizationId });
      expect(stored.length).toBeGreaterThanOrEqual(acknowledged.runs.length);
      for (const run of stored) {
        expect(run.status, run._id).toBe("succeeded");
        expect(run.completedAt, run._id).toBeInstanceOf(Date);
        expect(JSON.parse(run.stepsJson), run._id).toHaveLength(1);
      }
    } finally {
      await store.close();
    }
  }, 180_000);

  it("finishes an evaluation and fails an asynchronous agent run that a crash interrupted", async () => {
    const stub = await startOpenAIStub({ latencyMs: 400 });
    try {
      const dir = await dataDir();
      const env = { OPENAI_COMPATIBLE_PROVIDERS: stubProviders(stub.baseUrl) };
      const first = await startKiln(dir, env);
      let api = createTestClient(first.base);
      const { token, organizationId } = await member(api);
      const { skillId, promptId } = await publishedSkill(api, token, organizationId, "stub/fixed");
      const cases = await api.createEvaluationCases(
        token,
        organizationId,
        skillId,
        Array.from({ length: 12 }, (_, i) => ({
          name: `case ${i}`,
          input: { name: `n${i}` },
          assertions: [{ type: "contains" as const, value: `n${i}` }],
        })),
      );

      const agent = await api.post<{ id: string; draftVersionId: string }>(
        "/api/agents",
        { organizationId, name: "Slow agent" },
        { token },
      );
      expect(agent.status, agent.text).toBe(201);
      const workflow = {
        inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        entry: "greet",
        steps: [{ id: "greet", type: "prompt", ref: { promptId }, input: { name: "{{inputs.name}}" } }],
        output: "{{steps.greet.output}}",
      };
      const saved = await api.request("PUT", `/api/agent-versions/${agent.body.draftVersionId}/workflow`, {
        token,
        body: { workflow },
      });
      expect(saved.status, saved.text).toBe(200);
      expect((await api.post(`/api/agents/${agent.body.id}/publish`, {}, { token })).status).toBe(200);
      stub.script({ type: "completion", content: "slow hello", finishReason: "stop", delayMs: 30_000 });
      const agentRun = await api.post<{ id: string; status: string }>(
        `/api/agents/${agent.body.id}/run`,
        { organizationId, inputs: { name: "Ada" }, mode: "async" },
        { token },
      );
      expect(agentRun.status, agentRun.text).toBe(202);
      // The agent's model call holds the slow answer before the evaluation starts.
      while (stub.requests.length < 1) await new Promise((r) => setTimeout(r, 10));

      const evaluation = await api.startEvaluation(token, organizationId, skillId, { targets: ["published"] });

      // Crash once the evaluation has some results but not all.
      for (;;) {
        const seen = await api.getEvaluation(token, skillId, evaluation.id);
        const done = seen.results.filter((r) => r.byTarget.published).length;
        if (seen.status === "completed") throw new Error("the evaluation finished before the crash");
        if (done >= 1) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      first.child.kill("SIGKILL");
      await first.exited;

      const second = await startKiln(dir, env);
      api = createTestClient(second.base);
      const finished = await api.waitForEvaluation(token, skillId, evaluation.id, { timeoutMs: 60_000 });
      expect(finished.status).toBe("completed");
      expect(finished.results.map((r) => r.caseId)).toEqual(cases.map((c) => c.id));
      // Every case ran once to an outcome of its own (the stub's answer), none lost to the crash.
      for (const r of finished.results) {
        expect(["pass", "fail"]).toContain(r.byTarget.published?.outcome);
        expect(r.byTarget.published?.runId).toMatch(/^srun_/);
      }
      const interrupted = await api.get<{ status: string; error: { code: string; message: string } }>(
        `/api/agent-runs/${agentRun.body.id}`,
        { token },
      );
      expect(interrupted.body).toMatchObject({ status: "failed", error: { code: "unavailable" } });
      expect(interrupted.body.error.message).toMatch(/restart|crash/);
      await stop(second, "SIGTERM");
    } finally {
      await stub.close();
    }
  }, 180_000);

  it("backs up while serving, and restores into a directory a new platform serves", async () => {
    const { dir, first, token, organizationId, prompt } = await platformWithPrompt("kept by the backup");
    let api = createTestClient(first.base);
    const backup = join(dirname(dir), "backup.db");
    const kiln = (command: "backup" | "restore", dataDir: string) => kilnCommand(command, backup, dataDir);
    expect(kiln("backup", dir)).toContain("backed up");
    // A running platform holds its directory: a restore into it is refused.
    expect(() => kiln("restore", dir)).toThrow(/in use by another Kiln process/);
    const later = await api.createPrompt(token, organizationId, { name: "after the backup" });
    await stop(first, "SIGTERM");

    const restoredDir = await dataDir();
    expect(kiln("restore", restoredDir)).toContain("restored");
    // Both carry the platform's secrets: readable by their owner only.
    expect((await stat(backup)).mode & 0o777).toBe(0o600);
    expect((await stat(join(restoredDir, "store.db"))).mode & 0o777).toBe(0o600);
    const second = await startKiln(restoredDir);
    api = createTestClient(second.base);
    // The restored copy has the platform's secrets too: the old token still verifies.
    expect((await api.get(`/api/prompts/${prompt.id}`, { token })).status).toBe(200);
    expect((await api.get(`/api/prompts/${later.id}`, { token })).status).toBe(404);
    await stop(second, "SIGTERM");
  }, 60_000);

  it("carries a directory and a backup of data format 1 (LMDB) over, with everything in them", async () => {
    const { dir, first, token, prompt } = await platformWithPrompt("kept from format 1");
    await stop(first, "SIGTERM");
    // The directory as Kiln wrote it until format 2: the same key spaces in an LMDB file.
    await toFormat1(dir);
    const oldBackup = join(dirname(dir), "format-1-backup.mdb");
    await copyFile(join(dir, "store.mdb"), oldBackup);

    const second = await startKiln(dir);
    let api = createTestClient(second.base);
    // The platform's secrets came over too: the token issued before still verifies.
    expect((await api.get<{ name: string }>(`/api/prompts/${prompt.id}`, { token })).body.name).toBe(
      "kept from format 1",
    );
    const renamed = await api.patch(`/api/prompts/${prompt.id}`, { name: "written on format 2" }, { token });
    expect(renamed.status).toBe(200);
    await stop(second, "SIGTERM");
    expect(JSON.parse(await readFile(join(dir, "kiln-data.json"), "utf8")).format).toBe(2);
    expect(await readdir(dir)).toEqual(expect.arrayContaining(["store.db", "store.mdb.format-1"]));
    expect(await readdir(dir)).not.toContain("store.mdb");

    // A backup of format 1 restores into a new directory.
    const restoredDir = await dataDir();
    expect(kilnCommand("restore", oldBackup, restoredDir)).toContain("restored");
    // A file of neither format is refused with a message, and the directory keeps its store.
    const junk = join(dirname(dir), "junk.db");
    await writeFile(junk, Buffer.alloc(3_000, 7));
    expect(() => kilnCommand("restore", junk, restoredDir)).toThrow(/is neither a Kiln SQLite database nor/);
    const third = await startKiln(restoredDir);
    api = createTestClient(third.base);
    expect((await api.get<{ name: string }>(`/api/prompts/${prompt.id}`, { token })).body.name).toBe(
      "kept from format 1",
    );
    await stop(third, "SIGTERM");
  }, 60_000);

  it("refuses a directory written by a newer Kiln, and a second process on the same directory", async () => {
    const dir = await dataDir();
    const first = await startKiln(dir);
    await expect(startKiln(dir)).rejects.toThrow(/in use by another Kiln process/);
    await stop(first, "SIGTERM");
    await writeFile(join(dir, "kiln-data.json"), JSON.stringify({ format: 99 }));
    await expect(startKiln(dir)).rejects.toThrow(/written by a newer Kiln \(data format 99/);
  }, 60_000);
});
