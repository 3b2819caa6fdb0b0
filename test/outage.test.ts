/**
 * A store or bus outage answers 503 `unavailable`, never 500 (issue #32): the distributed platform
 * on a FerretDB and a nats-server of its own, each stopped and started again (same data, behind a
 * relay that keeps their address) while requests keep coming; the embedded platform with its store closed under it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { openEmbeddedData } from "@kiln/launcher/data-dir";
import { createTestClient, type TestClient, type TestResponse } from "@kiln/testing/test-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Distributed, startDistributed } from "./support/distributed.js";
import { startEmbedded } from "./support/embedded.js";
import { relay } from "./support/relay.js";
import { type RunningServer, startFerretDb, startNatsServer } from "./support/servers.js";

const portOf = (url: string) => Number(new URL(url).port);

interface Session {
  api: TestClient;
  token: string;
  organizationId: string;
}

async function signedUp(base: string): Promise<Session> {
  const api = createTestClient(base);
  const { accessToken: token } = await api.signUp();
  const { organization } = await api.onboard(token);
  return { api, token, organizationId: organization.id };
}

/** Requests of every service: identity, catalog reads and writes, execution. */
const requests = (s: Session, n: number): (() => Promise<TestResponse<unknown>>)[] => [
  () => s.api.get(`/api/organizations/${s.organizationId}`, { token: s.token }),
  () => s.api.get("/api/prompts", { token: s.token, query: { organizationId: s.organizationId } }),
  () => s.api.post("/api/prompts", { organizationId: s.organizationId, name: `During ${n}` }, { token: s.token }),
  () => s.api.get("/api/runs", { token: s.token, query: { organizationId: s.organizationId } }),
];

/** Every answer's status and error code while `during` runs, the requests going round meanwhile. */
async function answersWhile(s: Session, during: () => Promise<void>): Promise<{ status: number; code?: string }[]> {
  const seen: { status: number; code?: string }[] = [];
  let done = false;
  const loops = [0, 1].map(async (lane) => {
    for (let n = lane; !done; n += 2) {
      for (const send of requests(s, n)) {
        const res = await send();
        seen.push({ status: res.status, code: (res.body as { error?: { code: string } })?.error?.code });
      }
    }
  });
  await during();
  done = true;
  await Promise.all(loops);
  return seen;
}

/** Every request answered as it was before the outage, within `timeoutMs`; the last statuses otherwise. */
async function recovered(s: Session, timeoutMs = 60_000): Promise<void> {
  const expected = [200, 200, 201, 200];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const statuses = await Promise.all(requests(s, Date.now()).map(async (send) => (await send()).status));
    if (statuses.every((status, i) => status === expected[i])) return;
    if (Date.now() > deadline) throw new Error(`not recovered within ${timeoutMs} ms: ${statuses.join(", ")}`);
    await sleep(250);
  }
}

describe("the distributed platform through a store and a bus outage", () => {
  let ferret: RunningServer;
  let nats: RunningServer;
  let kiln: Distributed;
  let session: Session;
  let ferretRelay: Awaited<ReturnType<typeof relay>>;
  let natsRelay: Awaited<ReturnType<typeof relay>>;

  beforeAll(async () => {
    [ferret, nats] = await Promise.all([startFerretDb(), startNatsServer()]);
    [ferretRelay, natsRelay] = await Promise.all([relay(portOf(ferret.url)), relay(portOf(nats.url))]);
    kiln = await startDistributed({
      // An operation waits 1.5 s (not the driver's 30 s) for a server to come back.
      mongoUrl: `mongodb://127.0.0.1:${ferretRelay.port}/?directConnection=true&serverSelectionTimeoutMS=1500`,
      natsUrl: `nats://127.0.0.1:${natsRelay.port}`,
    });
    session = await signedUp(kiln.gatewayUrl);
    await recovered(session);
  }, 180_000);

  afterAll(async () => {
    await kiln?.stop();
    await Promise.all([ferretRelay?.close(), natsRelay?.close()]);
    await Promise.all([ferret?.stop({ removeData: true }), nats?.stop({ removeData: true })]);
  });

  it("answers 503 unavailable while the document store is down and restarts, then serves again", async () => {
    const seen = await answersWhile(session, async () => {
      await sleep(300);
      await ferret.stop();
      ferretRelay.retarget(portOf(ferret.url));
      // Longer than a store operation's 1.5 s wait and its one retry, so that some answer falls inside.
      await sleep(8_000);
      ferret = await startFerretDb({ dir: ferret.dir });
      ferretRelay.retarget(portOf(ferret.url));
      await sleep(1_000);
    });
    await recovered(session);
    const statuses = new Set(seen.map((a) => `${a.status} ${a.code ?? ""}`.trim()));
    expect([...statuses].sort()).toEqual(expect.arrayContaining(["503 unavailable"]));
    expect([...statuses].filter((s) => !["200", "201", "503 unavailable"].includes(s))).toEqual([]);
  }, 120_000);

  it("answers 503 unavailable for what needs the bus while it is down, then serves again", async () => {
    await nats.stop();
    natsRelay.retarget(portOf(nats.url));
    // A catalog write moves the catalog's change counter on the bus before it answers.
    const write = await session.api.post(
      "/api/prompts",
      { organizationId: session.organizationId, name: "Bus down" },
      { token: session.token },
    );
    expect({ status: write.status, code: (write.body as { error?: { code: string } }).error?.code }).toEqual({
      status: 503,
      code: "unavailable",
    });
    nats = await startNatsServer({ dir: nats.dir });
    natsRelay.retarget(portOf(nats.url));
    await recovered(session);
  }, 120_000);
});

describe("the embedded platform with its store closed", () => {
  const dir = mkdtempSync(join(tmpdir(), "kiln-outage-"));
  let close: () => Promise<void>;
  let closeStores: () => Promise<void>;
  let session: Session;

  beforeAll(async () => {
    const data = await openEmbeddedData(dir);
    closeStores = () => data.close();
    const { kiln, baseUrl } = await startEmbedded({ data });
    close = () => kiln.gateway.app.close();
    session = await signedUp(baseUrl);
  }, 60_000);

  afterAll(async () => {
    await close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers 503 unavailable, never 500", async () => {
    await closeStores();
    const answers = await Promise.all(requests(session, 0).map((send) => send()));
    expect(answers.map((a) => [a.status, (a.body as { error?: { code: string } }).error?.code])).toEqual(
      answers.map(() => [503, "unavailable"]),
    );
  });
});
