import { describeBusContract } from "@kiln/testing/bus-contract";
import { describe, expect, it, vi } from "vitest";
import { createMemoryBus } from "./memory-bus.js";
import { DEFAULT_STREAM_MAX_BYTES } from "./memory-bus-state.js";

describeBusContract("memory bus", async () => {
  const bus = createMemoryBus();
  return { bus, cleanup: () => bus.close() };
});

describe("memory bus byte bound", () => {
  const week = 7 * 24 * 3_600_000;

  it("keeps at most the stream's bytes, dropping the oldest messages first (discard old)", async () => {
    const bus = createMemoryBus({ streamMaxBytes: 1_000 });
    await bus.ensureStream({ name: "EVENTS", subjects: ["events.>"], retention: "limits", maxAgeMs: week });
    const payload = "x".repeat(90);
    for (let i = 0; i < 100; i++) await bus.publish("events.a", `${String(i).padStart(2, "0")}${payload}`);
    const info = await bus.streamInfo("EVENTS");
    // 100 bytes a message (data, subject): ten of them fit in 1 000 bytes.
    expect(info.messages).toBe(10);
    expect(info.lastSeq).toBe(100);
    const seen: string[] = [];
    const sub = bus.consume({ stream: "EVENTS", durable: "late" }, async (m) => {
      seen.push(m.string().slice(0, 2));
    });
    await vi.waitFor(() => expect(seen).toHaveLength(10));
    expect(seen[0]).toBe("90");
    await sub.stop();
    await bus.close();
  });

  it("bounds every stream by default, and a stream's own maxBytes wins", async () => {
    const bus = createMemoryBus();
    await bus.ensureStream({ name: "BIG", subjects: ["big"], retention: "limits", maxAgeMs: week });
    await bus.ensureStream({ name: "SMALL", subjects: ["small"], retention: "limits", maxBytes: 500 });
    const chunk = new Uint8Array(1024 * 1024);
    for (let i = 0; i < DEFAULT_STREAM_MAX_BYTES / chunk.length + 4; i++) await bus.publish("big", chunk);
    expect((await bus.streamInfo("BIG")).messages).toBeLessThan(DEFAULT_STREAM_MAX_BYTES / chunk.length);
    for (let i = 0; i < 20; i++) await bus.publish("small", "y".repeat(95));
    expect((await bus.streamInfo("SMALL")).messages).toBe(5);
    await bus.close();
  });
});
