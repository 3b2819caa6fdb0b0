import { describe, expect, it } from "vitest";
import { createLedgerLock } from "./ledger-lock.js";

const tick = () => new Promise((r) => setImmediate(r));

/** A promise and the function that settles it. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("the ledger lock", () => {
  it("starts a read only after the flush being applied is applied", async () => {
    const lock = createLedgerLock();
    const events: string[] = [];
    const flush = deferred();
    const applied = lock.apply(async () => {
      events.push("apply");
      await flush.promise;
      events.push("applied");
    });
    await tick();
    const read = lock.read(async () => events.push("read"));
    await tick();
    expect(events).toEqual(["apply"]);
    flush.resolve();
    await Promise.all([applied, read]);
    expect(events).toEqual(["apply", "applied", "read"]);
  });

  it("applies a flush only after the reads in flight, and holds the reads that come meanwhile", async () => {
    const lock = createLedgerLock();
    const events: string[] = [];
    const first = deferred();
    const reads = [
      lock.read(async () => {
        events.push("read 1");
        await first.promise;
        events.push("read 1 done");
      }),
      lock.read(async () => events.push("read 2")),
    ];
    await tick();
    const applied = lock.apply(async () => events.push("apply"));
    await tick();
    reads.push(lock.read(async () => events.push("read 3")));
    await tick();
    expect(events).toEqual(["read 1", "read 2"]);
    first.resolve();
    await Promise.all([applied, ...reads]);
    expect(events).toEqual(["read 1", "read 2", "read 1 done", "apply", "read 3"]);
  });

  it("lets the next flush and reads go after a flush that failed", async () => {
    const lock = createLedgerLock();
    await expect(lock.apply(async () => Promise.reject(new Error("store down")))).rejects.toThrow("store down");
    expect(await lock.read(async () => 1)).toBe(1);
    expect(await lock.apply(async () => 2)).toBe(2);
  });
});
