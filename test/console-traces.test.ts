/**
 * The console's traces and sessions (issue #36) in Debian's chromium, through the UI: the empty
 * state says how to send traces; the list newest first, paged to its end through the SDK's
 * pagination, filtered, a bad filter shown at its field, errors marked; a trace's span tree with its
 * timeline, collapsible, a model call's messages, tool calls, usage and cost ("unpriced", never $0);
 * sessions and one session as a conversation linking to its traces. Traces are posted as OTLP/JSON
 * with an API key holding traces:write; each screen is checked with axe at 1366 px and 390 px and
 * photographed into test-artifacts/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";
import { call } from "./support/identity-flow.js";
import { otlpTrace, postTraces, seedTraces } from "./support/trace-seed.js";

let c: ConsoleBrowser;
const seed = seedTraces("ui");
const { first, failed, run } = seed.traces;

beforeAll(async () => {
  c = await openConsole();
  await signUp(c.page, c.base, "Observers");
}, 60_000);

afterAll(async () => {
  await c?.close();
});

/** An API key with traces:write for the console's organization, made with the signed-in user's session. */
async function tracesKey(): Promise<string> {
  const { organizationId } = await consoleSdk(c.page, c.base);
  const cookie = (await c.page.context().cookies(`${c.base}/api`)).find((k) => k.name === "kiln_session");
  const r = await call(c.base, "POST", "/api/api-keys", {
    token: cookie?.value,
    body: { organizationId, name: "otel", scopes: ["traces:write"] },
  });
  expect(r.status).toBe(201);
  return r.body.key;
}

describe("the console's traces and sessions", () => {
  it("says how to send traces while there are none", async () => {
    const { page } = c;
    await page.getByRole("link", { name: "Traces" }).click();
    await page.getByRole("heading", { name: "Traces", exact: true }).waitFor();
    await page.getByText("No traces yet.").waitFor();
    expect(await page.locator(".how-to-send").textContent()).toContain(`${c.base}/otel/v1/traces`);
    await page.getByText("traces:write").first().waitFor();
    await c.screen("traces-empty");
  });

  it("lists traces newest first to the end, filters, and shows a bad filter at its field", async () => {
    const { page } = c;
    const key = await tracesKey();
    // 48 older traces in one request, then the seeded ones: 52 in all, more than a page.
    const fillers = Array.from({ length: 48 }, (_, i) =>
      otlpTrace(Date.now() - 3_600_000 + i, [{ name: `batch job ${i}`, at: 0, ms: 20 + i }]),
    );
    await postTraces(c.base, key, [
      { body: { resourceSpans: fillers.flatMap((f) => f.body.resourceSpans) } },
      ...Object.values(seed.traces),
    ]);
    await page.getByRole("link", { name: "Sessions" }).click();
    await page.getByRole("heading", { name: "Sessions", exact: true }).waitFor();
    await page.getByRole("link", { name: "Traces" }).click();
    await page.getByText("50 traces shown, newest first.").waitFor();
    const rows = page.getByRole("row");
    // The newest: the Kiln run (linking to its run page), then the failed turn, marked.
    expect(await rows.nth(1).textContent()).toContain(seed.label);
    expect(
      await rows
        .nth(1)
        .getByRole("link", { name: new RegExp(seed.label) })
        .getAttribute("href"),
    ).toBe(`/runs/${run.body.resourceSpans[0]?.scopeSpans[0]?.spans[0]?.attributes[0]?.value.stringValue}`);
    expect(await rows.nth(2).getAttribute("class")).toBe("run-failed");
    expect(await rows.nth(2).textContent()).toContain("unpriced");
    expect(await rows.nth(2).textContent()).toContain(seed.otherUser);
    await c.screen("traces-list");
    await page.getByRole("button", { name: "Load 50 more" }).click();
    await page.getByText("52 traces shown: that is all of them.").waitFor();
    expect(await rows.count()).toBe(53);

    await page.getByLabel("User").fill(seed.user);
    await page.getByRole("button", { name: "Filter traces" }).click();
    await page.getByText("2 traces shown: that is all of them.").waitFor();
    await page.getByLabel("Cost at most (USD)").fill("0.001");
    await page.getByRole("button", { name: "Filter traces" }).click();
    await page.getByText("1 trace shown: that is all of them.").waitFor();
    await page.getByLabel("Cost at least (USD)").fill("a lot");
    await page.getByRole("button", { name: "Filter traces" }).click();
    const costField = page.getByLabel("Cost at least (USD)");
    await page.getByText("must be a number of US dollars, 0 or more").waitFor();
    expect(await costField.getAttribute("aria-invalid")).toBe("true");
    await c.screen("traces-bad-filter");
    await costField.fill("");
    await page.getByLabel("Cost at most (USD)").fill("");
    await page.getByRole("button", { name: "Filter traces" }).click();
    await page.getByText("2 traces shown: that is all of them.").waitFor();
  }, 120_000);

  it("shows a trace's span tree with its timeline, and a model call's messages, usage and cost", async () => {
    const { page } = c;
    await page.locator(`a[href="/traces/${first.traceId}"]`).click();
    await page.getByRole("heading", { name: /^Trace support turn/ }).waitFor();
    const tree = page.getByRole("list", { name: "Spans" });
    expect(await tree.getByRole("listitem").count()).toBe(3);
    // The first model call is selected: its model, usage, cost and messages (roles, tool calls).
    const call = page.getByRole("region", { name: "Model call" });
    await call.getByText("gpt-4o-mini").waitFor();
    expect(await call.textContent()).toContain("1,000 in / 500 out");
    expect(await call.locator("dd[title]").textContent()).toMatch(/^\$0\.000[45]$/);
    const input = page.getByRole("list", { name: "Input messages" });
    expect(await input.textContent()).toContain("Be kind.");
    expect(await input.textContent()).toContain("Where is my order?");
    const output = page.getByRole("list", { name: "Output messages" });
    expect(await output.textContent()).toContain("calls lookup_order");
    expect(await output.textContent()).toContain("It ships tomorrow.");
    // Bars are placed by start time: the model call starts a third of the way in.
    const bar = tree.getByRole("listitem").nth(2).locator(".span-bar");
    expect(await bar.getAttribute("style")).toMatch(/left: 33\.3\d*%/);
    // The attributes Kiln's mapping did not read, listed apart (docs/observability.md "Unmapped attributes").
    const unmapped = page.getByRole("region", { name: "Not mapped" });
    expect(await unmapped.getByRole("listitem").allTextContents()).toEqual(["server.address", "app.tenant"]);
    await unmapped.scrollIntoViewIfNeeded();
    await c.screen("trace-detail");

    await tree.getByRole("button", { name: "lookup order" }).click();
    const tool = page.getByRole("region", { name: "Tool call" });
    expect(await tool.textContent()).toContain('"order": "A-1"');
    await page.getByRole("button", { name: "Collapse support turn" }).click();
    expect(await tree.getByRole("listitem").count()).toBe(1);
    await page.getByRole("button", { name: "Expand support turn" }).click();
    expect(await tree.getByRole("listitem").count()).toBe(3);

    // A model without a price: "unpriced", never $0.
    await page.goto(`${c.base}/traces/${failed.traceId}`);
    await page.getByRole("heading", { name: /^Trace escalate/ }).waitFor();
    expect(await page.getByRole("region", { name: "Model call" }).locator("dd[title]").textContent()).toBe("unpriced");
    expect(await page.locator("dl.summary").first().textContent()).toContain("unpriced");
    await c.screen("trace-unpriced");
  });

  it("lists sessions by latest activity and shows one as a conversation linking to its traces", async () => {
    const { page } = c;
    await page.getByRole("link", { name: "Sessions" }).click();
    await page.getByText("2 sessions shown: that is all of them.").waitFor();
    const rows = page.getByRole("row");
    expect(await rows.nth(1).textContent()).toContain(seed.otherSession);
    expect(await rows.nth(2).textContent()).toContain(seed.session);
    expect(await rows.nth(2).textContent()).toContain("1,800");
    await c.screen("sessions-list");

    await page.getByRole("link", { name: seed.session }).click();
    await page.getByRole("heading", { name: `Session ${seed.session}` }).waitFor();
    const turns = page.getByRole("list", { name: "Conversation" }).locator("> li");
    expect(await turns.count()).toBe(2);
    expect(await turns.nth(0).getByRole("list", { name: "Asked" }).textContent()).toContain("Where is my order?");
    expect(await turns.nth(0).getByRole("list", { name: "Answered" }).textContent()).toContain("It ships tomorrow.");
    expect(await turns.nth(1).getByRole("list", { name: "Asked" }).textContent()).toContain(
      "Can I change the address?",
    );
    await page.getByText("2 of 2 traces shown.").waitFor();
    await c.screen("session-detail");
    await turns.nth(1).getByRole("link", { name: "support turn" }).click();
    await page.getByRole("heading", { name: /^Trace support turn/ }).waitFor();
    await page.getByRole("region", { name: "Model call" }).getByText("gpt-4o").first().waitFor();
  });

  it("points a Kiln run's model call at the run, where its messages are, instead of saying it carried none", async () => {
    const { page, base } = c;
    const { sdk, organizationId } = await consoleSdk(page, base);
    const prompt = await sdk.prompts.create({ organizationId, name: "Traced reply" });
    const version = await sdk.prompts.createVersion(prompt.id, { systemPrompt: "Reply.", model: "local/echo" });
    await sdk.prompts.publish(prompt.id, { versionId: version.id });
    const run = await sdk.prompts.run(prompt.id, { organizationId, variables: {} });
    // The run's trace is written after its answer, in the background.
    let traceId: string | undefined;
    await expect
      .poll(async () => {
        const page1 = await sdk.traces.list({ organizationId, limit: 200 }).pages().next();
        traceId = page1.value?.data.find((t: { runId?: string | null }) => t.runId === run.id)?.traceId;
        return traceId !== undefined;
      })
      .toBe(true);
    await page.goto(`${base}/traces/${traceId}`);
    const call = page.getByRole("region", { name: "Model call" });
    await call.waitFor();
    expect(await call.textContent()).not.toContain("The span carried no input messages.");
    await call.getByText(/Kiln keeps this call's messages on its run/).waitFor();
    await call.getByRole("link", { name: run.id }).click();
    await page.getByRole("heading", { name: new RegExp(`run ${run.id}`) }).waitFor();
  });
});
