/**
 * examples/attach-flow.ts as a user runs it: a child process (tsx) against the embedded platform
 * listening on a free port.
 */
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedKiln, startEmbedded } from "./support/embedded.js";

const run = promisify(execFile);
const examples = join(dirname(fileURLToPath(import.meta.url)), "..", "examples");

let kiln: EmbeddedKiln;
let baseUrl: string;

beforeAll(async () => {
  ({ kiln, baseUrl } = await startEmbedded());
});

afterAll(async () => {
  await kiln?.close();
});

describe("examples/attach-flow.ts", () => {
  it("walks the attach flow, an evaluation and an agent run with the SDK", async () => {
    const { stdout, stderr } = await run(
      process.execPath,
      ["--conditions=kiln-source", "--import", "tsx", "attach-flow.ts"],
      {
        cwd: examples,
        env: { PATH: process.env.PATH, KILN_URL: baseUrl },
        timeout: 60_000,
      },
    );
    expect(stderr).toBe("");
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^organization org_\w+ \(free\): setup ok$/);
    expect(stdout).toMatch(/step 1 forecast: Forecast v1 \{\}/);
    expect(stdout).toMatch(/step 2 packing: Packing list v1 \{"forecast":"\{\{steps.forecast.output\}\}"\}/);
    expect(stdout).toMatch(/preview: succeeded, 2 steps/);
    expect(stdout).toMatch(/skill run srun_\w+: succeeded on local\/echo/);
    expect(stdout).toMatch(/evaluation evr_\w+: completed/);
    expect(stdout).toMatch(/ {2}published: 2 passed, 0 failed, 0 errored/);
    expect(stdout).toMatch(/agent run arun_\w+: succeeded, steps plan/);
  });

  it("exits non-zero with the error when the platform cannot be reached", async () => {
    const failed = await run(process.execPath, ["--conditions=kiln-source", "--import", "tsx", "attach-flow.ts"], {
      cwd: examples,
      env: { PATH: process.env.PATH, KILN_URL: "http://127.0.0.1:9" },
      timeout: 30_000,
    }).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 1, stderr: expect.stringMatching(/^attach flow failed: /) });
  });
});
