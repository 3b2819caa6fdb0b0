/**
 * Labels end to end (issue #17), in both run modes over real HTTP: move, run by label, protected
 * refusal (a member, and an API key without labels:write), history, publish ⇔ production, latest
 * read-only, the organization's protected labels setting; the same routes for skills and agents.
 */

import { createPublishedAgent } from "@kiln/testing/agent-fixture";
import { createTestClient, type TestClient } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { twoVersionSkill } from "./support/evaluation-fixture.js";
import { PROVIDER_MODES, type RunningKiln } from "./support/provider-modes.js";

interface Label {
  label: string;
  versionId: string;
  version: number;
  updatedAt: string;
  updatedBy: string | null;
  readOnly: boolean;
  protected: boolean;
}
interface Move {
  id: string;
  label: string;
  action: string;
  versionId: string | null;
  previousVersionId: string | null;
  by: string | null;
}

describe.each(PROVIDER_MODES)("labels in $name", (mode) => {
  let running: RunningKiln;
  let api: TestClient;
  let owner: string;
  let ownerId: string;
  let organizationId: string;
  let memberToken: string;
  let promptId: string;
  const versions: string[] = [];

  const run = (label: string | undefined, token = owner) =>
    api.post<{ promptVersionId: string; output: { text: string } }>(
      `/api/prompts/${promptId}/run`,
      { organizationId, variables: { name: "Ada" }, ...(label ? { label } : {}) },
      { token },
    );
  const labels = async (token = owner) => {
    const r = await api.get<{ data: Label[]; nextCursor: null }>(`/api/prompts/${promptId}/labels`, { token });
    expect(r.status).toBe(200);
    expect(r.body.nextCursor).toBeNull();
    return r.body.data;
  };

  beforeAll(async () => {
    running = await mode.start();
    api = createTestClient(running.base);
    const signedUp = await api.signUp();
    owner = signedUp.accessToken;
    ownerId = signedUp.user.id;
    organizationId = (await api.onboard(owner)).organization.id;
    const member = await api.signUp();
    memberToken = member.accessToken;
    const added = await api.post<{ membership: { role: string; userId: string } }>(
      `/api/organizations/${organizationId}/members`,
      { email: member.user.email, role: "member" },
      { token: owner },
    );
    expect(added.status).toBe(201);
    expect(added.body.membership).toMatchObject({ role: "member", userId: member.user.id });

    const prompt = await api.createPrompt(owner, organizationId, { name: "Greeter" });
    promptId = prompt.id;
    for (const n of [1, 2, 3]) {
      const v = await api.createPromptVersion(owner, promptId, {
        systemPrompt: `Version ${n} greets {{name}}`,
        variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      });
      versions.push(v.id);
    }
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it("starts with latest only; production appears when a version is published, and publishing records the move", async () => {
    expect((await labels()).map((l) => [l.label, l.versionId, l.readOnly])).toEqual([["latest", versions[2], true]]);
    expect((await run(undefined)).status).toBe(409);
    const none = await run("production");
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ error: { code: "not_found", message: expect.stringContaining("production") } });

    await api.publishPrompt(owner, promptId, versions[0] ?? "");
    const after = await labels();
    expect(after.find((l) => l.label === "production")).toMatchObject({
      versionId: versions[0],
      version: 1,
      protected: true,
      readOnly: false,
      updatedBy: ownerId,
    });
    const history = await api.get<{ data: Move[] }>(`/api/prompts/${promptId}/labels/production/history`, {
      token: owner,
    });
    expect(history.body.data).toEqual([
      expect.objectContaining({ action: "published", versionId: versions[0], previousVersionId: null, by: ownerId }),
    ]);
    expect((await run(undefined)).body.promptVersionId).toBe(versions[0]);
    expect((await run("production")).body.promptVersionId).toBe(versions[0]);
    expect((await run("latest")).body.output.text).toContain("Version 3");
  });

  it("moves a custom label, runs by it, keeps every move newest first, and deletes it", async () => {
    const set = await api.put<Label>(
      `/api/prompts/${promptId}/labels/staging`,
      { versionId: versions[1] },
      { token: owner },
    );
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ label: "staging", versionId: versions[1], version: 2, protected: false });
    const staged = await run("staging");
    expect(staged.status).toBe(201);
    expect(staged.body.promptVersionId).toBe(versions[1]);
    expect(staged.body.output.text).toContain("Version 2 greets Ada");

    // A member may move an unprotected label.
    const byMember = await api.put<Label>(
      `/api/prompts/${promptId}/labels/staging`,
      { versionId: versions[2] },
      { token: memberToken },
    );
    expect(byMember.status).toBe(200);
    expect((await run("staging")).body.promptVersionId).toBe(versions[2]);
    // The same place again is no move.
    await api.put(`/api/prompts/${promptId}/labels/staging`, { versionId: versions[2] }, { token: owner });

    const history = await api.get<{ data: Move[]; nextCursor: string }>(
      `/api/prompts/${promptId}/labels/staging/history`,
      { token: owner, query: { limit: 1 } },
    );
    expect(history.body.data).toEqual([
      expect.objectContaining({ action: "moved", versionId: versions[2], previousVersionId: versions[1] }),
    ]);
    const next = await api.get<{ data: Move[]; nextCursor: string | null }>(
      `/api/prompts/${promptId}/labels/staging/history`,
      { token: owner, query: { cursor: history.body.nextCursor } },
    );
    expect(next.body.data).toEqual([
      expect.objectContaining({ action: "moved", versionId: versions[1], previousVersionId: null, by: ownerId }),
    ]);
    expect(next.body.nextCursor).toBeNull();

    expect((await api.delete<Label>(`/api/prompts/${promptId}/labels/staging`, { token: owner })).status).toBe(200);
    const gone = await run("staging");
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ error: { code: "not_found", message: "label staging not found" } });
    expect((await api.delete(`/api/prompts/${promptId}/labels/staging`, { token: owner })).status).toBe(404);
  });

  it("moving production publishes a draft, and promotes an older published version back", async () => {
    const moved = await api.put<Label>(
      `/api/prompts/${promptId}/labels/production`,
      { versionId: versions[1] },
      { token: owner },
    );
    expect(moved.status).toBe(200);
    const prompt = await api.get<{ publishedVersionId: string; versions: { id: string; status: string }[] }>(
      `/api/prompts/${promptId}`,
      { token: owner },
    );
    expect(prompt.body.publishedVersionId).toBe(versions[1]);
    expect(prompt.body.versions.find((v) => v.id === versions[1])?.status).toBe("published");
    expect((await run(undefined)).body.promptVersionId).toBe(versions[1]);

    const back = await api.put<Label>(
      `/api/prompts/${promptId}/labels/production`,
      { versionId: versions[0] },
      { token: owner },
    );
    expect(back.body).toMatchObject({ label: "production", versionId: versions[0] });
    const again = await api.get<{ publishedVersionId: string }>(`/api/prompts/${promptId}`, { token: owner });
    expect(again.body.publishedVersionId).toBe(versions[0]);
    expect((await run(undefined)).body.promptVersionId).toBe(versions[0]);

    const history = await api.get<{ data: Move[] }>(`/api/prompts/${promptId}/labels/production/history`, {
      token: owner,
    });
    expect(history.body.data.map((m) => [m.action, m.versionId, m.previousVersionId])).toEqual([
      ["moved", versions[0], versions[1]],
      ["published", versions[1], versions[0]],
      ["published", versions[0], null],
    ]);
  });

  it("refuses what cannot be: latest is read-only, production is never removed, bad names, both versionId and label", async () => {
    const latest = await api.put(
      `/api/prompts/${promptId}/labels/latest`,
      { versionId: versions[0] },
      { token: owner },
    );
    expect(latest.status).toBe(400);
    expect(latest.body).toMatchObject({ error: { code: "invalid_argument", details: [{ field: "label" }] } });
    const removeProduction = await api.delete(`/api/prompts/${promptId}/labels/production`, { token: owner });
    expect(removeProduction.status).toBe(409);
    for (const bad of ["Staging", "9lives", "draft", "a".repeat(41)]) {
      const r = await api.put(`/api/prompts/${promptId}/labels/${bad}`, { versionId: versions[0] }, { token: owner });
      expect(r.status, bad).toBe(400);
    }
    const wrongVersion = await api.put(
      `/api/prompts/${promptId}/labels/qa`,
      { versionId: "pv_00000000000000000000000000000000" },
      { token: owner },
    );
    expect(wrongVersion.status).toBe(404);
    const both = await api.post(
      `/api/prompts/${promptId}/run`,
      { organizationId, variables: { name: "Ada" }, versionId: versions[0], label: "latest" },
      { token: owner },
    );
    expect(both.status).toBe(400);
    expect((await labels()).map((l) => l.label)).toEqual(["production", "latest"]);
  });

  it("protects production from members (labels and publish) and keys without labels:write; owners choose what is protected", async () => {
    const refused = await api.put(
      `/api/prompts/${promptId}/labels/production`,
      { versionId: versions[2] },
      { token: memberToken },
    );
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: "permission_denied" } });
    const publish = await api.post(
      `/api/prompts/${promptId}/publish`,
      { versionId: versions[2] },
      { token: memberToken },
    );
    expect(publish.status).toBe(403);

    const plainKey = await api.createApiKey(owner, organizationId, ["prompts:read", "prompts:write", "runs:write"]);
    const byPlainKey = await api.put(
      `/api/prompts/${promptId}/labels/staging`,
      { versionId: versions[2] },
      { token: plainKey.key },
    );
    expect(byPlainKey.status).toBe(403);
    expect(byPlainKey.body).toMatchObject({ error: { message: expect.stringContaining("labels:write") } });
    const labelKey = await api.createApiKey(owner, organizationId, ["prompts:read", "labels:write"]);
    const byLabelKey = await api.put<Label>(
      `/api/prompts/${promptId}/labels/staging`,
      { versionId: versions[2] },
      { token: labelKey.key },
    );
    expect(byLabelKey.status).toBe(200);
    expect(byLabelKey.body.updatedBy).toBe(labelKey.id);

    // Members may not change what is protected; owners may, and then staging is theirs.
    const memberSettings = await api.patch(
      `/api/organizations/${organizationId}`,
      { settings: { protectedLabels: [] } },
      { token: memberToken },
    );
    expect(memberSettings.status).toBe(403);
    const badSettings = await api.patch(
      `/api/organizations/${organizationId}`,
      { settings: { protectedLabels: ["Prod"] } },
      { token: owner },
    );
    expect(badSettings.status).toBe(400);
    const settings = await api.patch<{ settings: { protectedLabels: string[] } }>(
      `/api/organizations/${organizationId}`,
      { settings: { protectedLabels: ["production", "staging"] } },
      { token: owner },
    );
    expect(settings.status).toBe(200);
    expect(settings.body.settings.protectedLabels).toEqual(["production", "staging"]);
    const org = await api.get<{
      organization: { settings: { protectedLabels: string[] } };
      membership: { role: string };
    }>(`/api/organizations/${organizationId}`, { token: memberToken });
    expect(org.body.membership.role).toBe("member");
    // Authorization decisions are cached for a few seconds (API_KEY_CACHE_TTL_MS and the like).
    let status = 0;
    for (let i = 0; i < 40 && status !== 403; i++) {
      status = (
        await api.put(`/api/prompts/${promptId}/labels/staging`, { versionId: versions[1] }, { token: memberToken })
      ).status;
      if (status !== 403) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(403);
    const members = await api.get<{ data: { membership: { role: string } }[] }>(
      `/api/organizations/${organizationId}/members`,
      { token: memberToken },
    );
    expect(members.body.data.map((m) => m.membership.role).sort()).toEqual(["member", "owner"]);
  });

  it("labels skills and agents with the same routes, runs them by label", async () => {
    const skill = await twoVersionSkill(
      api,
      { token: owner, organizationId },
      { name: "Labelled", model: "local/echo", published: "Hello {{name}}", draft: "Bonjour {{name}}" },
    );
    const skillLabels = await api.get<{ data: Label[] }>(`/api/skills/${skill.skillId}/labels`, { token: owner });
    expect(skillLabels.body.data.map((l) => [l.label, l.versionId])).toEqual([
      ["production", skill.publishedVersionId],
      ["latest", skill.draftVersionId],
    ]);
    const canary = await api.put<Label>(
      `/api/skills/${skill.skillId}/labels/canary`,
      { versionId: skill.draftVersionId },
      { token: owner },
    );
    expect(canary.status).toBe(200);
    const skillRun = await api.post<{ skillVersionId: string }>(
      `/api/skills/${skill.skillId}/run`,
      { organizationId, input: { name: "Ada" }, label: "canary" },
      { token: owner },
    );
    expect(skillRun.status).toBe(201);
    expect(skillRun.body.skillVersionId).toBe(skill.draftVersionId);
    const missing = await api.post(
      `/api/skills/${skill.skillId}/run`,
      { organizationId, input: { name: "Ada" }, label: "nope" },
      { token: owner },
    );
    expect(missing.status).toBe(404);

    // Labels are evaluation targets: production (before) against canary (after).
    await api.createEvaluationCases(owner, organizationId, skill.skillId, [
      { name: "greets in English", input: { name: "Ada" }, assertions: [{ type: "contains", value: "Hello" }] },
    ]);
    const started = await api.startEvaluation(owner, organizationId, skill.skillId, {
      targets: ["production", "canary"],
    });
    const evaluation = (await api.waitForEvaluation(owner, skill.skillId, started.id)) as unknown as {
      status: string;
      targets: { label: string; skillVersionId: string }[];
      results: { byTarget: Record<string, { outcome: string }>; change: string | null }[];
      summary: { changes: { regressed: number } };
    };
    expect(evaluation.status).toBe("completed");
    expect(evaluation.targets).toEqual([
      { label: "production", skillVersionId: skill.publishedVersionId },
      { label: "canary", skillVersionId: skill.draftVersionId },
    ]);
    expect(evaluation.results[0]?.byTarget.production?.outcome).toBe("pass");
    expect(evaluation.results[0]?.byTarget.canary?.outcome).toBe("fail");
    expect(evaluation.results[0]?.change).toBe("regressed");
    expect(evaluation.summary.changes.regressed).toBe(1);
    const noSuchTarget = await api.post(
      `/api/skills/${skill.skillId}/evaluations/run`,
      { organizationId, targets: ["qa"] },
      { token: owner },
    );
    expect(noSuchTarget.status).toBe(409);

    const agent = await createPublishedAgent(api, owner, organizationId);
    const agentLabels = await api.get<{ data: Label[] }>(`/api/agents/${agent.agentId}/labels`, { token: owner });
    const production = agentLabels.body.data.find((l) => l.label === "production");
    expect(production?.versionId).toBe(agent.draftVersionId);
    await api.put(`/api/agents/${agent.agentId}/labels/stable`, { versionId: agent.draftVersionId }, { token: owner });
    const agentRun = await api.post<{ agentVersionId: string; status: string }>(
      `/api/agents/${agent.agentId}/run`,
      { organizationId, inputs: { topic: "labels", city: "Paris", skipWeather: true }, label: "stable" },
      { token: owner },
    );
    expect(agentRun.status).toBe(201);
    expect(agentRun.body.agentVersionId).toBe(agent.draftVersionId);
  });
});
