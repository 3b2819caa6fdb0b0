/**
 * `pnpm bench:mcp`: an MCP tools/call (Streamable HTTP, the official client, one session) against
 * the REST run route it shares the run path with (POST /api/skills/{id}/run), in the same run, on
 * the embedded platform with the built-in local/echo model. BENCH_MCP_CALLS (default 300) calls
 * each, first one at a time (median and p95 latency: the latency MCP adds), then BENCH_MCP_CONCURRENCY
 * (default 8) at once (throughput, and the ratio MCP/REST). The organization holds BENCH_MCP_SKILLS
 * (default 10) published skills, which tools/call looks its tool up among.
 */
import { createLogger } from "@kiln/kit/logger";
import { buildEmbedded } from "@kiln/launcher/embedded";
import { createTestClient } from "@kiln/testing/test-client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 300);
const CONCURRENCY = Number(process.env.BENCH_MCP_CONCURRENCY ?? 8);
const SKILLS = Number(process.env.BENCH_MCP_SKILLS ?? 10);

const kiln = await buildEmbedded({ logger: createLogger({ name: "bench", level: "silent" }) });
const base = await kiln.gateway.app.listen({ host: "127.0.0.1", port: 0 });
const api = createTestClient(base);
const { email, password } = await api.signUp();
const { accessToken: token } = await api.token(email, password);
const organizationId = (await api.onboard(token)).organization.id;
const { key } = await api.createApiKey(token, organizationId, ["skills:read", "runs:write"]);
const prompt = await api.createPublishedPrompt(token, organizationId, {
  systemPrompt: "Greet {{name}}.",
  variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
});
let skillId = "";
for (let i = 0; i < SKILLS; i++) {
  const skill = await api.createSkill(token, organizationId, { name: `Bench skill ${i}` });
  await api.replaceSkillPrompts(token, skill.draftVersionId ?? "", [{ promptId: prompt.prompt.id }]);
  await api.publishSkill(token, skill.id);
  skillId = skill.id;
}
const toolName = `skill_bench_skill_${SKILLS - 1}`;

const client = new Client({ name: "bench", version: "1.0.0" });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  }),
);

const rest = async () => {
  const res = await fetch(`${base}/api/skills/${skillId}/run`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ input: { name: "Ada" } }),
  });
  if (res.status !== 201) throw new Error(`REST run: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
};
const mcp = async () => {
  const r = await client.callTool({ name: toolName, arguments: { name: "Ada" } });
  if (r.isError) throw new Error(`tools/call: ${JSON.stringify(r.content)}`);
};

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

async function sequential(call: () => Promise<void>) {
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: quantile(times, 0.5), p95: quantile(times, 0.95) };
}

async function concurrent(call: () => Promise<void>) {
  let left = CALLS;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await call();
    }),
  );
  return CALLS / ((performance.now() - started) / 1000);
}

for (let i = 0; i < 30; i++) await Promise.all([rest(), mcp()]); // warm-up
const restSeq = await sequential(rest);
const mcpSeq = await sequential(mcp);
const restRate = await concurrent(rest);
const mcpRate = await concurrent(mcp);
const ms = (v: number) => `${v.toFixed(2)} ms`;
console.log(`calls ${CALLS} each, ${SKILLS} published skills, concurrency ${CONCURRENCY}`);
console.log(`REST run route   p50 ${ms(restSeq.p50)}  p95 ${ms(restSeq.p95)}  ${restRate.toFixed(0)} runs/s`);
console.log(`MCP tools/call   p50 ${ms(mcpSeq.p50)}  p95 ${ms(mcpSeq.p95)}  ${mcpRate.toFixed(0)} runs/s`);
console.log(
  `MCP adds ${ms(mcpSeq.p50 - restSeq.p50)} at p50; throughput ratio MCP/REST ${(mcpRate / restRate).toFixed(2)}`,
);
await client.close();
await kiln.close();
