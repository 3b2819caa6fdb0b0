import { randomUUID } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importPKCS8, type JWK, SignJWT } from "jose";

export interface TokenIssuer {
  readonly issuer: string;
  readonly audience: string;
  /** The public keys, as served at /.well-known/jwks.json. */
  readonly jwks: { keys: JWK[] };
  issue(userId: string): Promise<{ accessToken: string; expiresAt: Date }>;
}

export interface TokenIssuerOptions {
  issuer: string;
  audience: string;
  ttlSeconds: number;
  /** ES256 private key as PKCS#8 PEM; when absent a key pair is made for this process only. */
  privateKeyPem?: string;
}

/** The built-in issuer: ES256 access tokens (`typ: at+jwt`) for users, verifiable through the JWKS. */
export async function createTokenIssuer(options: TokenIssuerOptions): Promise<TokenIssuer> {
  const { privateKey, publicJwk } = options.privateKeyPem
    ? await importKey(options.privateKeyPem)
    : await generateKey();
  const kid = await calculateJwkThumbprint(publicJwk);
  const jwks = { keys: [{ ...publicJwk, kid, alg: "ES256", use: "sig" }] };
  return {
    issuer: options.issuer,
    audience: options.audience,
    jwks,
    async issue(userId) {
      const nowSeconds = Math.floor(Date.now() / 1000);
      const exp = nowSeconds + options.ttlSeconds;
      const accessToken = await new SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid, typ: "at+jwt" })
        .setIssuer(options.issuer)
        .setAudience(options.audience)
        .setSubject(userId)
        .setIssuedAt(nowSeconds)
        .setExpirationTime(exp)
        .setJti(randomUUID())
        .sign(privateKey);
      return { accessToken, expiresAt: new Date(exp * 1000) };
    },
  };
}

async function importKey(pem: string) {
  const privateKey = await importPKCS8(pem, "ES256", { extractable: true });
  const { d: _d, ...publicJwk } = await exportJWK(privateKey);
  return { privateKey, publicJwk };
}

async function generateKey() {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  return { privateKey, publicJwk: await exportJWK(publicKey) };
}
