import { createLogger } from "@kiln/kit/logger";
import { buildTestPlatform } from "@kiln/testing/platform";
import { createTestClient, type ErrorBody } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("rate limiting", () => {
  let kiln: Awaited<ReturnType<typeof buildTestPlatform>>;

  beforeAll(async () => {
    kiln = await buildTestPlatform({ logger: createLogger({ name: "test", level: "silent" }), rateLimitPerMinute: 3 });
  });

  afterAll(async () => {
    await kiln?.close();
  });

  it("answers 429 resource_exhausted with Retry-After once a principal exceeds its budget", async () => {
    const client = createTestClient(kiln.gateway.app);
    // Sign-up is anonymous: it counts against the client address.
    const user = await client.signUp();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await client.get("/api/models", { token: user.accessToken })).status);
    expect(statuses).toEqual([200, 200, 200]);
    const limited = await client.get<ErrorBody>("/api/models", { token: user.accessToken });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe("resource_exhausted");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    expect(limited.headers["x-request-id"]).toBeTruthy();
  });

  it("counts each principal on its own and never limits health checks", async () => {
    const client = createTestClient(kiln.gateway.app);
    for (let i = 0; i < 5; i++) expect((await client.get("/healthz")).status).toBe(200);
    const other = await createTestClient(kiln.gateway.app).signUp();
    expect((await client.get("/api/models", { token: other.accessToken })).status).toBe(200);
  });
});
