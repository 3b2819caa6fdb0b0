/**
 * The console talks to the public REST API through the SDK, and to the non-public routes it needs
 * (sign-up, tokens, the organization, members) with fetch, in the same error envelope.
 */
import { Kiln, KilnError } from "@kiln/sdk";

export interface Session {
  accessToken: string;
  email: string;
  organizationId?: string;
  organizationName?: string;
}

const KEY = "kiln.console.session";

export function loadSession(): Session | null {
  const text = sessionStorage.getItem(KEY);
  return text ? (JSON.parse(text) as Session) : null;
}

export function saveSession(session: Session | null): void {
  if (session) sessionStorage.setItem(KEY, JSON.stringify(session));
  else sessionStorage.removeItem(KEY);
}

export const clientOf = (session: Session) => new Kiln({ baseUrl: location.origin, accessToken: session.accessToken });

/** An API error as the console shows it: the message, and per field what is wrong. */
export interface ShownError {
  message: string;
  fields: Record<string, string>;
}

export function shownError(e: unknown): ShownError {
  if (e instanceof KilnError) {
    const fields: Record<string, string> = {};
    for (const d of e.details) fields[d.field] = d.issue;
    return { message: e.message, fields };
  }
  if (e instanceof Error) return { message: e.message, fields: {} };
  return { message: String(e), fields: {} };
}

interface Envelope {
  error?: { code: string; message: string; details?: { field: string; issue: string }[] };
}

/** A non-public route, answered as JSON or thrown as a ShownError. */
export async function call<T>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json().catch(() => ({}))) as T & Envelope;
  if (!response.ok) {
    const fields: Record<string, string> = {};
    for (const d of json.error?.details ?? []) fields[d.field] = d.issue;
    throw { message: json.error?.message ?? `HTTP ${response.status}`, fields } satisfies ShownError;
  }
  return json;
}

export const isShownError = (e: unknown): e is ShownError =>
  typeof e === "object" && e !== null && "message" in e && "fields" in e;

export const errorOf = (e: unknown): ShownError => (isShownError(e) ? e : shownError(e));
