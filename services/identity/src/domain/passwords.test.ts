import { randomBytes, scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "./passwords.js";

describe("hashPassword", () => {
  it("writes scrypt$N$r$p$salt$hash with a 16-byte salt and a 32-byte hash", async () => {
    const stored = await hashPassword("correct horse battery staple");
    const [alg, n, r, p, salt, hash, ...rest] = stored.split("$");
    expect([alg, n, r, p]).toEqual(["scrypt", "32768", "8", "1"]);
    expect(Buffer.from(salt ?? "", "base64")).toHaveLength(16);
    expect(Buffer.from(hash ?? "", "base64")).toHaveLength(32);
    expect(rest).toEqual([]);
    expect(stored).not.toContain("correct horse");
  });

  it("salts every hash", async () => {
    const [a, b] = await Promise.all([hashPassword("same password"), hashPassword("same password")]);
    expect(a).not.toBe(b);
    expect(await verifyPassword("same password", a)).toBe(true);
    expect(await verifyPassword("same password", b)).toBe(true);
  });
});

describe("verifyPassword", () => {
  it("accepts the password that was hashed and refuses any other", async () => {
    const stored = await hashPassword("s3cret-passw0rd");
    expect(await verifyPassword("s3cret-passw0rd", stored)).toBe(true);
    expect(await verifyPassword("s3cret-passw0rd ", stored)).toBe(false);
    expect(await verifyPassword("S3cret-passw0rd", stored)).toBe(false);
    expect(await verifyPassword("", stored)).toBe(false);
  });

  it("treats the composed and decomposed forms of a character as the same password", async () => {
    const stored = await hashPassword("caf\u00e9-latte");
    expect(await verifyPassword("cafe\u0301-latte", stored)).toBe(true);
  });

  it("verifies with the parameters stored beside the hash", async () => {
    const salt = randomBytes(16);
    const hash = scryptSync("old-password", salt, 32, { N: 1024, r: 8, p: 1 });
    const stored = `scrypt$1024$8$1$${salt.toString("base64")}$${hash.toString("base64")}`;
    expect(await verifyPassword("old-password", stored)).toBe(true);
    expect(await verifyPassword("new-password", stored)).toBe(false);
  });

  it.each([
    ["empty", ""],
    ["another algorithm", "bcrypt$32768$8$1$c2FsdA==$aGFzaA=="],
    ["missing parts", "scrypt$32768$8$1$c2FsdA=="],
    ["an empty hash", "scrypt$32768$8$1$c2FsdA==$"],
  ])("refuses a stored value that is not a scrypt hash (%s)", async (_, stored) => {
    expect(await verifyPassword("any-password", stored)).toBe(false);
  });
});
