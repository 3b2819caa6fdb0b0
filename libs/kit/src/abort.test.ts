import { describe, expect, it } from "vitest";
import { callDeadline, raceAbort } from "./abort.js";

describe("callDeadline", () => {
  it("aborts with the caller's reason while the call runs", () => {
    const caller = new AbortController();
    const deadline = callDeadline(caller.signal, 60_000, () => new Error("late"));
    caller.abort(new Error("cancelled by the caller"));
    expect(deadline.signal.aborted).toBe(true);
    expect((deadline.signal.reason as Error).message).toBe("cancelled by the caller");
    expect(deadline.timedOut()).toBe(false);
    deadline.dispose();
  });

  it("aborts at the deadline with its own reason", async () => {
    const deadline = callDeadline(undefined, 5, () => new Error("no answer within 5 ms"));
    await new Promise((resolve) => deadline.signal.addEventListener("abort", resolve));
    expect(deadline.timedOut()).toBe(true);
    expect((deadline.signal.reason as Error).message).toBe("no answer within 5 ms");
  });

  it("is already aborted when the caller's signal is", () => {
    const deadline = callDeadline(AbortSignal.abort("gone"), 60_000, () => "late");
    expect(deadline.signal.reason).toBe("gone");
    deadline.dispose();
  });

  it("lets go of the caller's signal and the timer once disposed", async () => {
    const caller = new AbortController();
    const deadline = callDeadline(caller.signal, 5, () => "late");
    deadline.dispose();
    caller.abort("after the call");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deadline.signal.aborted).toBe(false);
  });
});

describe("raceAbort", () => {
  it("settles as the promise does and removes its listener", async () => {
    const controller = new AbortController();
    let listening = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listening++;
      add(...args);
    }) as typeof add;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      listening--;
      remove(...args);
    }) as typeof remove;
    await expect(raceAbort(Promise.resolve(7), signal)).resolves.toBe(7);
    await expect(raceAbort(Promise.reject(new Error("failed")), signal)).rejects.toThrow("failed");
    expect(listening).toBe(0);
  });

  it("rejects with the signal's reason when it aborts first, even if the promise never settles", async () => {
    const controller = new AbortController();
    const raced = raceAbort(new Promise(() => {}), controller.signal);
    controller.abort(new Error("deadline"));
    await expect(raced).rejects.toThrow("deadline");
    await expect(raceAbort(Promise.resolve(1), AbortSignal.abort(new Error("before")))).rejects.toThrow("before");
  });
});
