import { createInternalTokens } from "@kiln/kit/auth";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { internalTokenCommand } from "./internal-token-command.js";

const env = { INTERNAL_AUTH_SECRET: "s".repeat(40) };

describe("internalTokenCommand", () => {
  it("signs a service token the services verify, with the documented claims", async () => {
    const token = await internalTokenCommand(["--service", "billing", "--ttl", "120"], env);
    expect(await createInternalTokens(env.INTERNAL_AUTH_SECRET).verify(token)).toEqual({
      type: "service",
      id: "billing",
    });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ iss: "kiln-internal", aud: "kiln-services", sub: "billing", typ: "service" });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(120);
  });

  it("signs a service token acting for one organization, with its org claim", async () => {
    const organizationId = `org_${"b".repeat(32)}`;
    const token = await internalTokenCommand(["--service", "billing", "--organization", organizationId], env);
    expect(await createInternalTokens(env.INTERNAL_AUTH_SECRET).verify(token)).toEqual({
      type: "service",
      id: "billing",
      organizationId,
    });
    expect(decodeJwt(token)).toMatchObject({ sub: "billing", typ: "service", org: organizationId });
    await expect(internalTokenCommand(["--service", "x", "--organization", "acme"], env)).rejects.toThrow(
      /--organization must be/,
    );
    await expect(
      internalTokenCommand(["--user", `usr_${"a".repeat(32)}`, "--organization", organizationId], env),
    ).rejects.toThrow(/goes with --service/);
  });

  it("signs a token acting as a user", async () => {
    const id = `usr_${"a".repeat(32)}`;
    const token = await internalTokenCommand(["--user", id], env);
    expect(await createInternalTokens(env.INTERNAL_AUTH_SECRET).verify(token)).toEqual({ type: "user", id });
  });

  it("refuses a missing secret, bad options and a token longer than an hour", async () => {
    await expect(internalTokenCommand(["--service", "x"], {})).rejects.toThrow(/INTERNAL_AUTH_SECRET/);
    await expect(internalTokenCommand([], env)).rejects.toThrow(/usage/);
    await expect(internalTokenCommand(["--service", "x", "--user", `usr_${"a".repeat(32)}`], env)).rejects.toThrow(
      /usage/,
    );
    await expect(internalTokenCommand(["--service", "x", "--ttl", "7200"], env)).rejects.toThrow(/--ttl/);
    await expect(internalTokenCommand(["--org", "x"], env)).rejects.toThrow(/unknown option --org/);
  });
});
