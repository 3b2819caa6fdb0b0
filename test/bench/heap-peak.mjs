/**
 * Preloaded into every process of `pnpm bench:limits` (NODE_OPTIONS=--import): samples V8's heap
 * every 5 ms and keeps the largest used size, written to $KILN_HEAP_PEAK_DIR/<pid>.json, with the
 * heap's limit (--max-old-space-size and the young generation). A peak inside one long synchronous
 * step is seen when that step ends, while what it allocated is still there.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { getHeapStatistics } from "node:v8";

const dir = process.env.KILN_HEAP_PEAK_DIR;
if (dir) {
  const file = join(dir, `${process.pid}.json`);
  let peak = 0;
  const sample = () => {
    const used = getHeapStatistics().used_heap_size;
    if (used > peak) peak = used;
  };
  const write = () =>
    writeFileSync(
      file,
      JSON.stringify({ pid: process.pid, peakUsed: peak, limit: getHeapStatistics().heap_size_limit }),
    );
  setInterval(sample, 5).unref();
  setInterval(write, 250).unref();
  process.on("exit", write);
}
