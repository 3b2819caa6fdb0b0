import { describe, expect, it } from "vitest";
import { createCallLimiter } from "./call-limiter.js";

const later = () => {
  let release: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { done, release };
};

describe("createCallLimiter", () => {
  it("runs at most the cap at once per model, the rest in arrival order", async () => {
    const limiter = createCallLimiter({ "stub/slow": 2 });
    const gates = [later(), later(), later(), later()];
    const started: number[] = [];
    const calls = gates.map((g, i) =>
      limiter.run("stub/slow", undefined, async () => {
        started.push(i);
        await g.done;
        return i;
      }),
    );
    await new Promise((r) => setTimeout(r, 5));
    expect(started).toEqual([0, 1]);
    expect(limiter.stats("stub/slow")).toEqual({ running: 2, waiting: 2 });
    gates[1]?.release();
    await new Promise((r) => setTimeout(r, 5));
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.release();
    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3]);
    expect(limiter.stats("stub/slow")).toEqual({ running: 0, waiting: 0 });
  });

  it("shares a provider-wide cap between its models, and leaves other models alone", async () => {
    const limiter = createCallLimiter({ "stub/*": 1 });
    const gate = later();
    const first = limiter.run("stub/a", undefined, () => gate.done);
    let second = false;
    const other = limiter.run("stub/b", undefined, async () => {
      second = true;
    });
    let free = false;
    await limiter.run("local/echo", undefined, async () => {
      free = true;
    });
    expect(free).toBe(true);
    expect(second).toBe(false);
    gate.release();
    await Promise.all([first, other]);
    expect(second).toBe(true);
  });

  it("lets a waiting call go when its signal aborts, with the signal's reason", async () => {
    const limiter = createCallLimiter({ "stub/slow": 1 });
    const gate = later();
    const first = limiter.run("stub/slow", undefined, () => gate.done);
    const controller = new AbortController();
    const waiting = limiter.run("stub/slow", controller.signal, async () => "ran");
    controller.abort(new Error("deadline"));
    await expect(waiting).rejects.toThrow("deadline");
    expect(limiter.stats("stub/slow")).toEqual({ running: 1, waiting: 0 });
    gate.release();
    await first;
    expect(await limiter.run("stub/slow", undefined, async () => "next")).toBe("next");
  });
});
