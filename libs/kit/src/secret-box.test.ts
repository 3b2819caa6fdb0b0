import { describe, expect, it } from "vitest";
import { createSecretBox, newSecretKey, parseSecretKey, parseSecretKeys } from "./secret-box.js";

describe("secret box", () => {
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

  it("seals to a value that holds nothing of the plaintext and opens it under the same context", () => {
    const box = createSecretBox({ current: newSecretKey(), previous: [] });
    const sealed = box.seal(secret, "whk_1");
    expect(sealed).toMatch(/^enc:v1:[0-9a-f]{12}:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(secret.slice(6));
    expect(sealed).not.toBe(box.seal(secret, "whk_1"));
    expect(box.open(sealed, "whk_1")).toBe(secret);
    expect(box.isCurrent(sealed)).toBe(true);
  });

  it("refuses another context, an altered value and an unknown key", () => {
    const box = createSecretBox({ current: newSecretKey(), previous: [] });
    const sealed = box.seal(secret, "whk_1");
    expect(() => box.open(sealed, "whk_2")).toThrow(/does not open/);
    const last = sealed.at(-2) === "A" ? "B" : "A";
    expect(() => box.open(`${sealed.slice(0, -2)}${last}${sealed.at(-1)}`, "whk_1")).toThrow(/does not open/);
    const other = createSecretBox({ current: newSecretKey(), previous: [] });
    expect(() => other.open(sealed, "whk_1")).toThrow(/neither KILN_SECRET_KEY nor in KILN_SECRET_KEY_PREVIOUS/);
  });

  it("opens with a previous key after a rotation, and reports the value as not current", () => {
    const old = newSecretKey();
    const sealed = createSecretBox({ current: old, previous: [] }).seal(secret, "whk_1");
    const rotated = createSecretBox({ current: newSecretKey(), previous: [old] });
    expect(rotated.open(sealed, "whk_1")).toBe(secret);
    expect(rotated.isCurrent(sealed)).toBe(false);
  });

  it("opens plaintext stored before encryption as itself, never current", () => {
    const box = createSecretBox({ current: newSecretKey(), previous: [] });
    expect(box.open(secret, "whk_1")).toBe(secret);
    expect(box.isCurrent(secret)).toBe(false);
  });

  it("reads 32-byte keys in hex, base64 and base64url, and names the variable (never the value) otherwise", () => {
    const key = newSecretKey();
    for (const text of [
      key.toString("hex"),
      key.toString("base64"),
      key.toString("base64url"),
      ` ${key.toString("hex")}\n`,
    ])
      expect(parseSecretKey(text, "K").equals(key)).toBe(true);
    for (const bad of [
      "short",
      "z".repeat(64),
      newSecretKey().toString("hex").slice(2),
      Buffer.alloc(31).toString("base64"),
    ]) {
      expect(() => parseSecretKey(bad, "KILN_SECRET_KEY")).toThrow(/^KILN_SECRET_KEY must be 32 bytes/);
      try {
        parseSecretKey(bad, "KILN_SECRET_KEY");
      } catch (e) {
        expect((e as Error).message).not.toContain(bad);
      }
    }
    const keys = parseSecretKeys(
      key.toString("base64"),
      `${newSecretKey().toString("hex")}, ${newSecretKey().toString("base64")}`,
    );
    expect(keys.previous).toHaveLength(2);
    expect(() => parseSecretKeys(key.toString("hex"), "nope")).toThrow(/KILN_SECRET_KEY_PREVIOUS \(key 1\)/);
  });
});
