/**
 * The run-trace backlog is bounded by bytes, not only by count: while the trace writes are stuck
 * (here the retention read before them never answers), large runs are dropped once the runs
 * waiting hold the budget, long before ten thousand of them.
 */
import type { Logger } from "@kiln/kit/logger";
import { createModelCatalog } from "@kiln/models/catalog";
import { describe, expect, it } from "vitest";
import { promptRunFixture } from "../../test/prompt-run-fixture.js";
import { createRunTraceRecorder } from "./run-trace-recorder.js";
import type { TraceRetention } from "./trace-retention.js";
import type { TraceCollections } from "./trace-store.js";

describe("run trace recorder backlog", () => {
  it("drops the traces of runs beyond its byte budget while the writes are behind", () => {
    const dropped: string[] = [];
    const logger = { warn: (fields: { runId: string }) => dropped.push(fields.runId) } as unknown as Logger;
    const stuck = { expiresAt: () => new Promise<Date>(() => undefined) } as unknown as TraceRetention;
    const recorder = createRunTraceRecorder({
      collections: {} as TraceCollections,
      models: createModelCatalog({ configuredProviders: [] }),
      logger,
      retention: stuck,
      maxPendingBytes: 4 * 1024 * 1024,
    });
    const large = "x".repeat(512 * 1024);
    for (let i = 0; i < 40; i++) {
      const run = promptRunFixture(`run_${i}`, "org_1");
      run.outputJson = JSON.stringify({ text: large });
      recorder.record(run, undefined);
    }
    // 4 MiB holds three runs of a 1 MiB output (two bytes a character); the rest are dropped.
    expect(dropped.length).toBeGreaterThanOrEqual(36);
    expect(dropped).toContain("run_39");
  });
});
