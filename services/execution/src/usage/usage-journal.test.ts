import { describe, expect, it } from "vitest";
import { packEntries, unpackEntries } from "./usage-journal.js";
import { type UsageEntry, type UsageKey, zeroCounters } from "./usage-rows.js";

const key = (promptId: string): UsageKey => ({
  day: "2026-12-03",
  apiKeyId: "key_00000000000000000000000000000001",
  promptId,
  promptVersionId: `${promptId}_v1`,
  skillId: "",
  skillVersionId: "",
  agentId: "",
  agentVersionId: "",
  model: "stub/priced",
  provider: "stub",
  connectionId: "",
});

const entry = (i: number, organizationId: string, promptId: string): UsageEntry => ({
  runId: `run_${String(i).padStart(32, "0")}`,
  organizationId,
  key: key(promptId),
  counters: { ...zeroCounters(), runs: 1, inputTokens: 1200 + i, outputTokens: 150, costUsd: 0.00585 + i / 1e6 },
});

describe("a flush's packed journal", () => {
  it("gives back every entry as it was, keys shared by the runs written once", () => {
    const entries = [
      ...Array.from({ length: 500 }, (_, i) => entry(i, "org_a", "prm_a")),
      entry(500, "org_b", "prm_a"),
      entry(501, "org_a", "prm_b"),
    ];
    const packed = packEntries(entries);
    expect(packed.keys).toHaveLength(3);
    expect(unpackEntries(packed)).toEqual(entries);
    // What a flush writes (and deletes) is a fraction of the entries written out.
    expect(JSON.stringify(packed).length).toBeLessThan(JSON.stringify(entries).length / 3);
  });

  it("packs no entries to nothing", () => {
    expect(unpackEntries(packEntries([]))).toEqual([]);
  });
});
