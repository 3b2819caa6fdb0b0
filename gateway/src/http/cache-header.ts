/**
 * The response cache's headers (docs/cache.md): `Kiln-Cache: ttl=<seconds>` or `Kiln-Cache:
 * no-store` on a prompt run's request, read into the run request's directive (a 400 naming the
 * header otherwise), and `Kiln-Cache-Status: hit|miss` on the answer of a run that used the cache
 * (by the header, or by its label's or version's default).
 */
import { LIMITS } from "@kiln/kit/limits";
import type { Run } from "@kiln/proto/execution";
import type { FastifyReply, FastifyRequest } from "fastify";
import Type from "typebox";
import { HttpError } from "../errors.js";

export const CACHE_STATUS_HEADER = "Kiln-Cache-Status";

const TTL = /^ttl=(\d{1,7})$/;

/** The request header, as a route's OpenAPI documents it (cacheDirectiveOf checks it). */
export const CacheRequestHeaders = {
  "kiln-cache": Type.Optional(
    Type.String({
      description: `ttl=<1 to ${LIMITS.cacheTtlSeconds} seconds>: answer from the response cache, or keep the answer that long; no-store: neither, whatever the defaults; absent: the label's or version's cacheTtlSeconds, if any (docs/cache.md)`,
    }),
  ),
};

/** The answer's header, as a 2xx response of a prompt run documents it. */
export const CacheStatusResponseHeaders = {
  [CACHE_STATUS_HEADER]: {
    type: "string",
    enum: ["hit", "miss"],
    description:
      "hit: answered from the response cache (no provider call); absent when the run did not use it (no header and no default, or no-store)",
  },
};

/** The request's Kiln-Cache header as the run request's `cache`; undefined when it sent none. */
export function cacheDirectiveOf(request: FastifyRequest): { ttlSeconds: number; noStore: boolean } | undefined {
  const raw = request.headers["kiln-cache"];
  if (raw === undefined) return undefined;
  const value = (Array.isArray(raw) ? raw.join(",") : raw).trim().toLowerCase();
  if (value === "no-store") return { ttlSeconds: 0, noStore: true };
  const ttl = TTL.exec(value);
  const seconds = ttl ? Number(ttl[1]) : 0;
  if (seconds < 1 || seconds > LIMITS.cacheTtlSeconds) {
    throw new HttpError("invalid_argument", "invalid Kiln-Cache header", [
      { field: "Kiln-Cache", issue: `must be ttl=<1 to ${LIMITS.cacheTtlSeconds} seconds> or no-store` },
    ]);
  }
  return { ttlSeconds: seconds, noStore: false };
}

/** Kiln-Cache-Status on the answer, when the run used the cache ("" or absent: it did not). */
export function replyCacheStatus(reply: FastifyReply, status: string | undefined): void {
  if (status) reply.header(CACHE_STATUS_HEADER, status);
}

/** Kiln-Cache-Status from a stored run's `cache`. */
export const replyRunCacheStatus = (reply: FastifyReply, run: Run | undefined) =>
  replyCacheStatus(reply, run?.cache?.status);
