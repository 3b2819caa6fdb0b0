/**
 * How tests start a launcher process from the source. The integration project's global setup bundles
 * launcher/src once per run with esbuild (scripts/build.mjs --out, the build the image runs, into a
 * directory of its own under launcher/.tmp) and names it in KILN_TEST_LAUNCHER_BUNDLE; every
 * process a test starts (five or more per distributed platform) then loads that bundle instead of
 * transforming the TypeScript through tsx again, which cost each process seconds of CPU on the
 * 2-core CI machine. Outside that setup (the benchmarks, a script) it is tsx on the source, as before.
 */
import { join } from "node:path";

export const LAUNCHER_BUNDLE_ENV = "KILN_TEST_LAUNCHER_BUNDLE";

/** The node arguments before a launcher command that run the current source. */
export function sourceLauncherArgs(root: string): string[] {
  const bundle = process.env[LAUNCHER_BUNDLE_ENV];
  return bundle ? ["--enable-source-maps", bundle] : ["--import", "tsx", join(root, "launcher/src/main.ts")];
}
