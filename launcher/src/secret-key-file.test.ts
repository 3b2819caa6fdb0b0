import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSecretBox, newSecretKey } from "@kiln/kit/secret-box";
import { afterAll, describe, expect, it } from "vitest";
import { embeddedSecretKeys } from "./config.js";
import { IN_MEMORY, openEmbeddedData } from "./data-dir.js";
import { SECRET_KEY_FILE } from "./secret-key-file.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "kiln-key-"));
  dirs.push(dir);
  return join(dir, "data");
};

describe("the embedded mode's secret key", () => {
  it("is made into the data directory on the first start (mode 0600), kept across starts, and not in the database", async () => {
    const dir = tempDir();
    const first = await openEmbeddedData(dir);
    await first.close();
    const file = join(dir, SECRET_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const second = await openEmbeddedData(dir);
    await second.close();
    expect(second.secretKeys.current.equals(first.secretKeys.current)).toBe(true);
    expect(Buffer.from(readFileSync(file, "utf8").trim(), "base64").equals(first.secretKeys.current)).toBe(true);
    // What it sealed before a restart opens after it.
    const sealed = createSecretBox(first.secretKeys).seal("whsec_x", "whk_1");
    expect(createSecretBox(second.secretKeys).open(sealed, "whk_1")).toBe("whsec_x");
    const db = readFileSync(join(dir, "store.db"));
    expect(db.includes(first.secretKeys.current)).toBe(false);
    expect(db.includes(Buffer.from(first.secretKeys.current.toString("base64")))).toBe(false);
  });

  it("gives way to KILN_SECRET_KEY, the directory's own key then opening what it sealed", async () => {
    const dir = tempDir();
    const own = await openEmbeddedData(dir);
    await own.close();
    const configured = newSecretKey();
    const keys = embeddedSecretKeys({ KILN_SECRET_KEY: configured.toString("hex"), KILN_SECRET_KEY_PREVIOUS: "" });
    const data = await openEmbeddedData(dir, { secretKeys: keys });
    await data.close();
    expect(data.secretKeys.current.equals(configured)).toBe(true);
    expect(data.secretKeys.previous.map((k) => k.toString("hex"))).toEqual([own.secretKeys.current.toString("hex")]);
    // A directory first started with the variable makes no file.
    const fresh = tempDir();
    await (await openEmbeddedData(fresh, { secretKeys: keys })).close();
    expect(() => statSync(join(fresh, SECRET_KEY_FILE))).toThrow();
  });

  it("is made for the process in memory, and KILN_SECRET_KEY_PREVIOUS alone is refused", async () => {
    const a = await openEmbeddedData(IN_MEMORY);
    const b = await openEmbeddedData(IN_MEMORY);
    expect(a.secretKeys.current.equals(b.secretKeys.current)).toBe(false);
    await a.close();
    await b.close();
    expect(embeddedSecretKeys({ KILN_SECRET_KEY: "", KILN_SECRET_KEY_PREVIOUS: "" })).toBeUndefined();
    expect(() =>
      embeddedSecretKeys({ KILN_SECRET_KEY: "", KILN_SECRET_KEY_PREVIOUS: newSecretKey().toString("hex") }),
    ).toThrow(/without KILN_SECRET_KEY/);
  });
});
