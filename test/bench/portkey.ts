/**
 * Portkey's open-source AI gateway (npm @portkey-ai/gateway), the pass-through peer `pnpm bench`
 * compares Kiln with: installed on first use into a cache folder (~/.cache/kiln, like the test
 * servers; never a workspace dependency) and started as a process of its own.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { freePort } from "../support/servers.js";

export const PORTKEY_VERSION = "1.15.2";

function installed(): string {
  const dir = join(process.env.KILN_CACHE_DIR ?? join(homedir(), ".cache", "kiln"), `portkey-${PORTKEY_VERSION}`);
  const entry = join(dir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js");
  if (existsSync(entry)) return entry;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "portkey-cache", private: true }));
  process.stderr.write(`installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${dir}\n`);
  execFileSync("npm", ["install", "--no-audit", "--no-fund", `@portkey-ai/gateway@${PORTKEY_VERSION}`], {
    cwd: dir,
    stdio: ["ignore", "ignore", "inherit"],
  });
  return entry;
}

/** Portkey on a free port; requests reach the stub through its `x-portkey-custom-host`. */
export async function startPortkey(): Promise<{ base: string; child: ChildProcess }> {
  const entry = installed();
  const port = await freePort();
  const child = spawn(process.execPath, [entry, `--port=${port}`, "--headless"], {
    env: { ...process.env, NODE_ENV: "production" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(base)).ok) return { base, child };
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error("Portkey's gateway did not start");
}

/** The headers that make Portkey pass a Chat Completions call through to an OpenAI-protocol host. */
export const portkeyHeaders = (stubUrl: string) => ({
  "content-type": "application/json",
  authorization: "Bearer sk-bench",
  "x-portkey-provider": "openai",
  "x-portkey-custom-host": stubUrl,
});
