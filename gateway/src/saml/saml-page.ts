import type { FastifyReply, FastifyRequest } from "fastify";
import type { HttpError } from "../errors.js";

/**
 * How the SAML endpoints answer a refusal (docs/api.md "SAML sign-in"): a browser (it asked for
 * HTML, as one posting the IdP's form does) gets a short page with the reason and a way back to the
 * console's sign-in; any other client the error envelope. The page has no script or style of its
 * own, so the console's Content-Security-Policy holds for it.
 */
const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const wantsHtml = (request: FastifyRequest) => request.headers.accept?.includes("text/html") ?? false;

function pageOf(title: string, reason: string, requestId: string): string {
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)} · Kiln</title></head><body>`,
    `<main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(reason)}</p>`,
    `<p>Request id: <code>${escapeHtml(requestId)}</code></p>`,
    '<p><a href="/">Back to sign-in</a></p></main></body></html>',
  ].join("");
}

/** Answers the refusal as a page or as the envelope; the reply is sent. */
export async function refuse(
  request: FastifyRequest,
  reply: FastifyReply,
  error: HttpError,
  title = "SAML sign-in failed",
): Promise<FastifyReply> {
  if (!wantsHtml(request)) throw error;
  const status = error.code === "not_found" ? 404 : error.code === "invalid_argument" ? 400 : 401;
  return reply
    .code(status)
    .type("text/html; charset=utf-8")
    .header("cache-control", "no-store")
    .send(pageOf(title, error.message, request.id));
}
