/**
 * The Audit log page's "Stream to a webhook" panel (issue #51, docs/governance.md "Streaming to a
 * webhook") in Debian's chromium: an owner's URL the address policy refuses is named on the field;
 * a local receiver's URL starts the stream, the secret is shown once and copied, the receiver gets
 * the log signed with it and the panel tells how far it got; a rotation (asked for first) shows a
 * new secret that signs what follows; removing (asked for first) stops it. A member sees no panel.
 * Screens are checked with axe at 1366 px and 390 px and photographed into test-artifacts/console/.
 */
import { createHmac } from "node:crypto";
import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuditReceiver, type ReceivedRequest, startAuditReceiver } from "./support/audit-receiver.js";
import { type ConsoleBrowser, consoleSdk, openConsole, signUp } from "./support/console-browser.js";
import { eventually } from "./support/identity-flow.js";

let c: ConsoleBrowser;
let receiver: AuditReceiver;

/** The check docs/governance.md gives a receiver. */
function signedBy(secret: string, r: ReceivedRequest): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const signed = `${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.text}`;
  const expected = `v1,${createHmac("sha256", key).update(signed).digest("base64")}`;
  return String(r.headers["webhook-signature"]).split(" ").includes(expected);
}

const sequences = () =>
  receiver.received.flatMap((r) => (r.body.entries as { sequence: number }[]).map((e) => e.sequence));

beforeAll(async () => {
  receiver = await startAuditReceiver();
  c = await openConsole({ webhooks: { privateHosts: parseHostPatterns("127.0.0.1") } });
  await signUp(c.page, c.base, "Hollerith Tabulating");
}, 60_000);

afterAll(async () => {
  await c?.close();
  await receiver?.close();
});

describe("the Audit log page's webhook panel", () => {
  it("sets the stream, shows the secret once, rotates it and removes the stream, each asked for first", async () => {
    const { page, base } = c;
    const { sdk, organizationId } = await consoleSdk(page, base);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    await page.getByRole("link", { name: "Audit log" }).click();
    const panel = page.getByRole("region", { name: "Stream to a webhook" });
    const form = panel.getByRole("form", { name: "Audit webhook" });
    await form.getByRole("button", { name: "Start streaming" }).waitFor();

    // A private address the deployment does not allow: named on the field, nothing set.
    await form.getByLabel("Webhook URL").fill("http://10.1.2.3/audit");
    await form.getByRole("button", { name: "Start streaming" }).click();
    await panel.getByText(/address 10\.1\.2\.3 is in the "private" range/).waitFor();
    expect(await form.getByLabel("Webhook URL").getAttribute("aria-invalid")).toBe("true");

    await form.getByLabel("Webhook URL").fill(receiver.url("/siem"));
    await form.getByRole("button", { name: "Start streaming" }).click();
    await panel.getByText(`Streaming the log to ${receiver.url("/siem")}, from its first entry.`).waitFor();
    const first = (await panel.locator("code.secret").textContent()) ?? "";
    expect(first).toMatch(/^whsec_/);
    await panel.getByRole("button", { name: "Copy secret" }).click();
    await panel.getByText("Copied the secret.").waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(first);
    await eventually(async () => sequences().length > 0, 20_000);
    expect(receiver.received.every((r) => signedBy(first, r))).toBe(true);
    await panel.getByRole("button", { name: "Refresh delivery" }).click();
    await panel
      .getByRole("status", { name: "Delivery" })
      .getByText(/^Acknowledged up to entry \d+/)
      .waitFor();
    await c.screen("audit-stream");

    // Rotated, once asked: a new secret, which alone signs what follows.
    await panel.getByRole("button", { name: "Rotate the secret" }).click();
    const dialog = panel.getByRole("alertdialog");
    await dialog.getByText(/^Rotate the signing secret\?/).waitFor();
    await c.screen("audit-stream-rotate");
    await dialog.getByRole("button", { name: "Yes, rotate the secret" }).click();
    await panel.getByText("The secret was rotated: requests are signed with the new one only.").waitFor();
    const second = (await panel.locator("code.secret").textContent()) ?? "";
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    const before = receiver.received.length;
    await sdk.prompts.create({ organizationId, name: "Punched cards" });
    await eventually(async () => receiver.received.length > before, 20_000);
    expect(receiver.received.slice(before).every((r) => signedBy(second, r) && !signedBy(first, r))).toBe(true);
    // Read again, the panel shows no secret.
    await page.reload();
    await panel.getByRole("button", { name: "Rotate the secret" }).waitFor();
    expect(await panel.locator("code.secret").count()).toBe(0);
    expect(await form.getByLabel("Webhook URL").inputValue()).toBe(receiver.url("/siem"));

    // Removed, once asked.
    await panel.getByRole("button", { name: "Remove the stream" }).click();
    await panel.getByRole("alertdialog").getByRole("button", { name: "Yes, remove the stream" }).click();
    await panel.getByText("The stream was removed: nothing more is sent.").waitFor();
    await form.getByRole("button", { name: "Start streaming" }).waitFor();
    const session = (await page.context().cookies(`${base}/api`)).find((k) => k.name === "kiln_session");
    const gone = await fetch(`${base}/api/organizations/${organizationId}/audit-stream`, {
      headers: { authorization: `Bearer ${session?.value}` },
    });
    expect(gone.status).toBe(404);
  }, 120_000);

  it("shows a member no panel (the API refuses them)", async () => {
    const { page, base } = c;
    const { organizationId } = await consoleSdk(page, base);
    const email = `member-${Date.now()}@example.test`;
    const password = "correct-horse-battery";
    const signedUp = await fetch(`${base}/api/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password, fullName: "Herman Hollerith" }),
    });
    expect(signedUp.status).toBe(201);
    const token = (await page.context().cookies(`${base}/api`)).find((k) => k.name === "kiln_session")?.value;
    const added = await fetch(`${base}/api/organizations/${organizationId}/members`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ email, role: "member" }),
    });
    expect(added.status).toBe(201);

    const other = await c.newPage();
    await other.goto(`${base}/signin`);
    await other.getByLabel("Email").fill(email);
    await other.getByLabel("Password").fill(password);
    await other.getByRole("button", { name: "Sign in" }).click();
    await other.getByRole("heading", { name: "Prompts", exact: true }).waitFor();
    await other.getByRole("link", { name: "Audit log" }).click();
    await other.getByRole("heading", { level: 1, name: "Audit log" }).waitFor();
    await other.getByRole("alert").first().waitFor();
    expect(await other.getByRole("region", { name: "Stream to a webhook" }).count()).toBe(0);
    await other.context().close();
  }, 60_000);
});
