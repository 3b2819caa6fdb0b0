/**
 * A flush's journal entry, packed (usage-ledger.ts): the runs of one flush share a few keys (one
 * organization, key, prompt and model), so each distinct organization and key is written once and
 * each run is its id, the index of its key and its counters in COUNTER_NAMES' order. A journal of
 * a thousand runs is a fifth of the size of their entries written out, and is what every flush
 * writes and deletes before and after it is applied.
 */
import { COUNTER_NAMES, type UsageEntry, type UsageKey, zeroCounters } from "./usage-rows.js";

export interface PackedEntries {
  keys: { organizationId: string; key: UsageKey }[];
  /** `r` the run id, `k` its index into keys, `c` its counters. */
  runs: { r: string; k: number; c: number[] }[];
}

export function packEntries(entries: readonly UsageEntry[]): PackedEntries {
  const keys: PackedEntries["keys"] = [];
  const indexOf = new Map<string, number>();
  const runs = entries.map((e) => {
    const text = JSON.stringify([e.organizationId, e.key]);
    let at = indexOf.get(text);
    if (at === undefined) {
      at = keys.push({ organizationId: e.organizationId, key: e.key }) - 1;
      indexOf.set(text, at);
    }
    return { r: e.runId, k: at, c: COUNTER_NAMES.map((name) => e.counters[name]) };
  });
  return { keys, runs };
}

export function unpackEntries(packed: PackedEntries): UsageEntry[] {
  return packed.runs.map(({ r: runId, k: at, c: counts }) => {
    const { organizationId, key } = packed.keys[at] as PackedEntries["keys"][number];
    const counters = zeroCounters();
    COUNTER_NAMES.forEach((name, i) => {
      counters[name] = Number(counts[i] ?? 0);
    });
    return { runId, organizationId, key, counters };
  });
}
