/**
 * The attach flow (docs/concepts.md "The attach flow") with the SDK, end to end, then an agent run:
 *
 *   pnpm start                                   # the embedded platform, in another terminal
 *   pnpm --filter @kiln/examples attach-flow     # KILN_URL=http://127.0.0.1:8080 by default
 *
 * It signs up a new user with the built-in issuer (a non-public route, so plain fetch), onboards
 * into a new organization and then uses only the SDK: two prompts with versions, published; a
 * skill composed of them with replacePrompts; its promptComposition; a preview; publish; a run;
 * evaluation cases and an evaluation run of draft and published versions, waited for; an agent
 * whose workflow calls the skill, published and run. Exits non-zero on the first failure.
 */
import { randomUUID } from "node:crypto";
import { Kiln, KilnError } from "@kiln/sdk";

const baseUrl = process.env.KILN_URL ?? "http://127.0.0.1:8080";
const log = (line: string) => process.stdout.write(`${line}\n`);

async function signUp(): Promise<string> {
  const response = await fetch(`${baseUrl}/api/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: `ada-${randomUUID()}@example.com`, password: "correct-horse-battery" }),
  });
  if (response.status !== 201) throw new Error(`sign-up answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { accessToken: string }).accessToken;
}

async function main(): Promise<void> {
  const kiln = new Kiln({ baseUrl, accessToken: await signUp() });

  // Onboarding creates the organization (Free plan, AI enabled); setup/verify checks it.
  const { organization } = await kiln.onboarding.complete({
    fullName: "Ada Lovelace",
    organizationName: "Analytical Engines",
  });
  const organizationId = organization.id;
  const setup = await kiln.setup.verify({ organizationId });
  log(`organization ${organizationId} (${organization.plan}): setup ${setup.ok ? "ok" : "failed"}`);

  // 1. Prompts and their immutable versions, published after review.
  const forecast = await kiln.prompts.create({ organizationId, name: "Forecast" });
  const forecastV1 = await kiln.prompts.createVersion(forecast.id, {
    systemPrompt: "Give the weather forecast for {{city}}.",
    variablesSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  });
  await kiln.prompts.publish(forecast.id, { versionId: forecastV1.id });
  const packing = await kiln.prompts.create({ organizationId, name: "Packing list" });
  const packingV1 = await kiln.prompts.createVersion(packing.id, {
    systemPrompt: "Write a packing list for this forecast: {{forecast}}",
    variablesSchema: { type: "object", properties: { forecast: { type: "string" } }, required: ["forecast"] },
  });
  await kiln.prompts.publish(packing.id, { versionId: packingV1.id });
  log(`prompts ${forecast.id} v1, ${packing.id} v1 published`);

  // 2. A skill whose draft version composes them: the second step reads the first one's output.
  const created = await kiln.skills.create({ organizationId, name: "Trip helper" });
  const draftVersionId = created.draftVersionId;
  if (!draftVersionId) throw new Error("a new skill has a draft version");
  await kiln.skills.replacePrompts(draftVersionId, {
    prompts: [
      { promptId: forecast.id, alias: "forecast" },
      { promptId: packing.id, alias: "packing", variables: { forecast: "{{steps.forecast.output}}" } },
    ],
  });

  // 3. The skill's promptComposition.
  const skill = await kiln.skills.get(created.id);
  for (const step of skill.promptComposition) {
    log(`  step ${step.order} ${step.alias}: ${step.promptName} v${step.version} ${JSON.stringify(step.variables)}`);
  }

  // 4. Preview the draft (stores nothing), 5. publish it and run it.
  const preview = await kiln.skills.preview(skill.id, { organizationId, input: { city: "Lisbon" } });
  log(`preview: ${preview.status}, ${preview.steps.length} steps, output "${preview.output?.text.slice(0, 60)}…"`);
  await kiln.skills.publish(skill.id);
  const run = await kiln.skills.run(skill.id, { organizationId, input: { city: "Lisbon" } });
  log(
    `skill run ${run.id}: ${run.status} on ${run.model}, ${run.usage.inputTokens}+${run.usage.outputTokens} tokens, ${run.latencyMs} ms`,
  );

  // Evaluation: cases, then a run of the draft (a new version) against the published version.
  await kiln.evaluations.createCases(skill.id, {
    organizationId,
    cases: [
      { name: "mentions the city", input: { city: "Lisbon" }, assertions: [{ type: "contains", value: "Lisbon" }] },
      { name: "answers fast", input: { city: "Oslo" }, assertions: [{ type: "max_latency_ms", value: 5_000 }] },
    ],
  });
  const next = await kiln.skills.createVersion(skill.id);
  await kiln.skills.replacePrompts(next.id, { prompts: [{ promptId: forecast.id, alias: "forecast" }] });
  const started = await kiln.evaluations.run(skill.id, { organizationId, targets: ["draft", "published"] });
  const evaluation = await kiln.evaluations.waitForResult(skill.id, started.evaluationRunId, { timeoutMs: 60_000 });
  log(`evaluation ${evaluation.id}: ${evaluation.status}`);
  for (const [label, summary] of Object.entries(evaluation.summary?.byTarget ?? {})) {
    log(`  ${label}: ${summary.passed} passed, ${summary.failed} failed, ${summary.errored} errored`);
  }
  log(`  changes: ${evaluation.summary?.text}; contract valid: ${evaluation.contractValidity?.valid}`);

  // An agent whose one-step workflow calls the published skill.
  const agent = await kiln.agents.create({ organizationId, name: "Trip agent" });
  if (!agent.draftVersionId) throw new Error("a new agent has a draft version");
  await kiln.agents.saveWorkflow(agent.draftVersionId, {
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    entry: "plan",
    steps: [{ id: "plan", type: "skill", ref: { skillId: skill.id }, input: { city: "{{inputs.city}}" } }],
    output: "{{steps.plan.output}}",
  });
  const validation = await kiln.agents.validateWorkflow(agent.draftVersionId);
  if (!validation.valid) throw new Error(`invalid workflow: ${JSON.stringify(validation.errors)}`);
  await kiln.agents.publish(agent.id);
  const agentRun = await kiln.agents.run(agent.id, { organizationId, inputs: { city: "Porto" } });
  log(`agent run ${agentRun.id}: ${agentRun.status}, steps ${agentRun.steps.map((s) => s.stepId).join(", ")}`);
  if (agentRun.status !== "succeeded") throw new Error(`the agent run ${agentRun.status}`);
}

try {
  await main();
} catch (error) {
  const detail = error instanceof KilnError ? ` (${error.status} ${error.code}, request ${error.requestId})` : "";
  process.stderr.write(`attach flow failed: ${error instanceof Error ? error.message : error}${detail}\n`);
  process.exitCode = 1;
}
