import { parseHostPatterns } from "@kiln/kit/outbound/host-patterns";
import { describe, expect, it } from "vitest";
import { webhookEventOf } from "./events.js";
import { backoffMs, DEFAULT_RETRY } from "./retry-policy.js";
import { newSecret, sign, signatureHeader, verify } from "./signing.js";
import { urlIssues } from "./url-policy.js";

describe("Standard Webhooks signatures", () => {
  it("matches the specification's example", () => {
    // The example of github.com/standard-webhooks/standard-webhooks (spec and libraries' tests).
    expect(
      sign(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("verifies any of several signatures, refuses a changed body, another secret and a stale timestamp", () => {
    const [a, b] = [newSecret(), newSecret()];
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const now = 1_800_000_000;
    const header = signatureHeader([a, b], "dlv_1", now, "{}");
    expect(header.split(" ")).toHaveLength(2);
    const h = { id: "dlv_1", timestamp: String(now), signature: header };
    expect(verify(a, h, "{}", { nowSeconds: now })).toBe(true);
    expect(verify(b, h, "{}", { nowSeconds: now })).toBe(true);
    expect(verify(a, h, "{ }", { nowSeconds: now })).toBe(false);
    expect(verify(newSecret(), h, "{}", { nowSeconds: now })).toBe(false);
    expect(verify(a, h, "{}", { nowSeconds: now + 301 })).toBe(false);
  });
});

describe("retries", () => {
  it("back off exponentially with jitter, up to the longest wait", () => {
    const low = () => 0;
    const high = () => 1;
    expect(backoffMs(1, DEFAULT_RETRY, low)).toBe(2_500);
    expect(backoffMs(1, DEFAULT_RETRY, high)).toBe(5_000);
    expect(backoffMs(2, DEFAULT_RETRY, high)).toBe(10_000);
    expect(backoffMs(5, DEFAULT_RETRY, high)).toBe(80_000);
    expect(backoffMs(40, DEFAULT_RETRY, high)).toBe(3_600_000);
  });
});

describe("webhook URLs", () => {
  it("refuse what http tools refuse: other schemes, credentials, private and metadata addresses", () => {
    expect(urlIssues("https://hooks.example.com/kiln", [])).toEqual([]);
    for (const bad of [
      "ftp://example.com/x",
      "not a url",
      "https://user:pw@example.com/",
      "http://10.0.0.8/hook",
      "http://169.254.169.254/latest/meta-data",
      "http://127.0.0.1:9/",
      "http://[::1]/",
      "http://0.0.0.0/",
      "https://example.com/#frag",
    ]) {
      expect(urlIssues(bad, []), bad).toHaveLength(1);
    }
    // A deployment may allow its own private hosts.
    expect(urlIssues("http://127.0.0.1:9/", parseHostPatterns("127.1"))).toEqual([]);
  });
});

describe("events from the bus", () => {
  it("read run.completed (not judge runs) and the catalog's and evaluations' envelopes", () => {
    const msg = (subject: string, body: unknown) => ({ subject, json: <T>() => body as T });
    const run = { runId: "run_1", kind: "prompt", organizationId: "org_1", completedAt: "2026-01-01T00:00:00.000Z" };
    expect(webhookEventOf(msg("runs.completed.prompt", run))).toMatchObject({
      id: "run.completed:run_1",
      type: "run.completed",
      organizationId: "org_1",
      data: run,
    });
    expect(webhookEventOf(msg("p.runs.completed.judge", { ...run, kind: "judge" }))).toBeUndefined();
    const moved = {
      id: "label.moved:lbm_1",
      type: "label.moved",
      organizationId: "org_1",
      occurredAt: "t",
      data: { a: 1 },
    };
    expect(webhookEventOf(msg("catalog.label.moved", moved))).toEqual({
      id: "label.moved:lbm_1",
      type: "label.moved",
      organizationId: "org_1",
      timestamp: "t",
      data: { a: 1 },
    });
    expect(webhookEventOf(msg("catalog.other", { ...moved, type: "nope" }))).toBeUndefined();
  });
});
