import { createLogger } from "@kiln/kit/logger";
import { describe, expect, it } from "vitest";
import { createAuditSender } from "./audit-sender.js";

/** A stand-in for identity's AuditService that refuses its first `failures` calls. */
function fakeAudit(failures: number) {
  const recorded: string[] = [];
  let calls = 0;
  const client = {
    async recordAuditEntries(req: { entries: { id: string }[] }) {
      calls++;
      if (calls <= failures) throw new Error("identity is restarting");
      recorded.push(...req.entries.map((e) => e.id));
      return { recorded: req.entries.length };
    },
  };
  return { client, recorded };
}

const entry = (id: string) => ({ id, organizationId: "org_a", action: "prompt.created" }) as never;

describe("the audit sender", () => {
  it("keeps an entry identity refused and sends it once identity is back", async () => {
    const fake = fakeAudit(2);
    const sender = createAuditSender(fake.client as never, createLogger({ name: "t", level: "silent" }));
    await sender.send(entry("aud_1"), "req_1");
    expect(fake.recorded).toEqual([]);
    // Retried every second; the first retry fails too, the next succeeds.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(fake.recorded).toEqual(["aud_1"]);
    await sender.stop();
  });

  it("sends what is still waiting when it stops", async () => {
    const fake = fakeAudit(1);
    const sender = createAuditSender(fake.client as never, createLogger({ name: "t", level: "silent" }));
    await sender.send(entry("aud_2"), "req_2");
    await sender.stop();
    expect(fake.recorded).toEqual(["aud_2"]);
  });
});
