/**
 * The console's human review screens (issue #36, docs/review.md) in Debian's chromium: a queue
 * created with its score set, runs added from their run pages, the queue's progress and items, and
 * the reviewer screen: a refused review named at its score, a review, an item turned into an
 * evaluation case with a corrected output, a skip, and the end of the queue. Every screen is checked
 * with axe at 1366 px and 390 px and photographed into test-artifacts/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";

let c: ConsoleBrowser;

beforeAll(async () => {
  c = await openConsole();
  await signUp(c.page, c.base, "Review Works");
}, 60_000);

afterAll(async () => {
  await c?.close();
});

describe("the console's review screens", () => {
  it("creates a queue, adds runs from their pages, reviews them one at a time and makes a case", async () => {
    const { page, base } = c;
    const { sdk, organizationId } = await consoleSdk(page, base);
    const prompt = await sdk.prompts.create({ organizationId, name: "Greeter", defaultModel: "local/echo" });
    const version = await sdk.prompts.createVersion(prompt.id, {
      systemPrompt: "Greet {{name}} warmly.",
      variablesSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    });
    await sdk.prompts.publish(prompt.id, { versionId: version.id });
    const first = await sdk.prompts.run(prompt.id, { organizationId, variables: { name: "Ada" } });
    const second = await sdk.prompts.run(prompt.id, { organizationId, variables: { name: "Charles" } });
    const skill = await sdk.skills.create({ organizationId, name: "Greetings" });

    await page.getByRole("link", { name: "Review", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Review" }).waitFor();
    await page.getByText("No queue yet.").waitFor();
    await page.getByLabel("Queue name").fill("Greetings to check");
    await page.getByLabel("Description").fill("Is the greeting right?");
    await page.getByRole("button", { name: "Add score" }).click();
    await page.getByLabel("Score 2 name").fill("quality");
    await page.getByLabel("Kind").nth(1).selectOption("numeric");
    await page.getByLabel("From").fill("5");
    await page.getByLabel("To").fill("1");
    await page.getByRole("button", { name: "Create queue" }).click();
    // The API's issue, shown at the score it concerns; nothing created.
    await page.getByText("must be greater than min").waitFor();
    await c.screen("review-queues");
    expect((await sdk.annotationQueues.list({ organizationId })).data).toEqual([]);
    await page.getByLabel("From").fill("1");
    await page.getByLabel("To").fill("5");
    await page.getByRole("button", { name: "Create queue" }).click();
    await page.getByRole("heading", { level: 1, name: "Greetings to check" }).waitFor();
    await page.getByText("No item. Add runs from a run's page.").waitFor();
    const [queue] = (await sdk.annotationQueues.list({ organizationId })).data;
    expect(queue?.scoreConfigs).toEqual([
      { name: "correct", kind: "boolean", required: true },
      { name: "quality", kind: "numeric", min: 1, max: 5, required: false },
    ]);
    const queueId = queue?.id ?? "";

    for (const run of [first, second]) {
      await page.goto(`${base}/runs/${run.id}`);
      await page.getByRole("heading", { level: 1, name: /prompt run/ }).waitFor();
      await page.getByLabel("Annotation queue").selectOption({ label: "Greetings to check" });
      await page.getByRole("button", { name: "Add to queue" }).click();
      await page.getByText("Added to Greetings to check.").waitFor();
    }
    await page.getByRole("button", { name: "Add to queue" }).click();
    await page.getByText("Already in Greetings to check.").waitFor();
    await c.screen("run-add-to-queue");

    await page.goto(`${base}/review/${queueId}`);
    await page.getByRole("heading", { name: "Progress" }).waitFor();
    await expect.poll(() => page.locator('section[aria-label="Items"] tbody tr').count()).toBe(2);
    await c.screen("review-queue");

    await page.getByRole("link", { name: "Start reviewing" }).click();
    await page.getByRole("heading", { level: 1, name: "Review: Greetings to check" }).waitFor();
    await page.getByText("Greet Ada warmly.").first().waitFor();
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByText("is required").waitFor();
    await page.getByRole("radio", { name: "Yes" }).check();
    await page.getByLabel("quality, 1 to 5").fill("4");
    await page.getByLabel("Comment").fill("Warm enough.");
    // Every score the refusal named is set now: nothing says "is required" or "Invalid review" any more.
    await expect.poll(() => page.getByText("is required").count()).toBe(0);
    await expect.poll(() => page.getByText("Invalid review").count()).toBe(0);
    await c.screen("review-screen");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.getByText("Review saved.").waitFor();
    await page.getByText("Greet Charles warmly.").first().waitFor();

    await page.getByLabel("Skill", { exact: true }).selectOption({ label: "Greetings" });
    await page.getByLabel("Corrected output (expected output)").fill("Hello Charles, welcome!");
    await page.getByRole("button", { name: "Add to evaluation cases" }).click();
    await page.getByText(/Added to the evaluation cases/).waitFor();
    await c.screen("review-case");
    await page.getByRole("button", { name: "Skip" }).click();
    await page.getByText("Nothing left to review in this queue.").waitFor();
    await c.screen("review-done");

    const cases = (await sdk.evaluations.listCases(skill.id)).data;
    expect(cases).toHaveLength(1);
    expect(cases[0]).toMatchObject({ input: { name: "Charles" }, expectedOutput: "Hello Charles, welcome!" });
    const progress = (await sdk.annotationQueues.get(queueId)).progress;
    expect(progress).toMatchObject({ pending: 0, inReview: 0, completed: 1, skipped: 1 });
    const [done] = (await sdk.annotationQueues.items(queueId, { status: "completed" })).data;
    expect(done?.review).toMatchObject({ scores: { correct: true, quality: 4 }, comment: "Warm enough." });

    // The queue names its reviewers as teammates read them, never by a raw id.
    await page.goto(`${base}/review/${queueId}`);
    const perReviewer = page.getByRole("region", { name: "Per reviewer" });
    await perReviewer.getByRole("row").filter({ hasText: "you" }).waitFor();
    expect(await perReviewer.textContent()).not.toMatch(/usr_/);
    expect(await page.locator('section[aria-label="Items"]').textContent()).not.toMatch(/usr_/);
  }, 120_000);
});
