/**
 * The console talks to the public REST API through the SDK, and to the non-public routes it needs
 * (sign-up, tokens, the organization, members) with fetch, in the same error envelope.
 */
import { Kiln, KilnError } from "@kiln/sdk";

/**
 * Who is signed in, as the console shows it. The credential is not here: it is the gateway's
 * httpOnly session cookie (docs/security.md "Console session"), out of every script's reach.
 */
export interface Session {
  /** The signed-in member's user id (names their own work "you"). */
  userId?: string;
  organizationId?: string;
  organizationName?: string;
}

/** The header every console request carries: the gateway refuses a cookie-session write without it. */
const CSRF = { "x-kiln-csrf": "1" };

export const clientOf = () => new Kiln({ baseUrl: location.origin, cookieSession: true });

const ORGANIZATION_KEY = "kiln.organization";

/** The organization the console opens from now on (one just joined), when the user is one of its members. */
export function rememberOrganization(organizationId: string): void {
  localStorage.setItem(ORGANIZATION_KEY, organizationId);
}

/**
 * Calls `handler` with the organization another tab switched to (its `rememberOrganization`), so
 * that every open tab follows a switch; returns the unsubscribe.
 */
export function onOrganizationRemembered(handler: (organizationId: string) => void): () => void {
  const listener = (e: StorageEvent) => {
    if (e.key === ORGANIZATION_KEY && e.newValue) handler(e.newValue);
  };
  window.addEventListener("storage", listener);
  return () => window.removeEventListener("storage", listener);
}

/**
 * The signed-in user's session (their organization, if onboarded), or null when signed out: the
 * organization remembered here if they are still a member, else their first.
 */
export async function currentSession(): Promise<Session | null> {
  try {
    const remembered = localStorage.getItem(ORGANIZATION_KEY);
    let verified = await clientOf().setup.verify(remembered ? { organizationId: remembered } : {});
    if (remembered && !verified.organization) {
      localStorage.removeItem(ORGANIZATION_KEY);
      verified = await clientOf().setup.verify({});
    }
    const org = verified.organization;
    const user = verified.principal?.type === "user" ? { userId: verified.principal.id } : {};
    return org ? { ...user, organizationId: org.id, organizationName: org.name } : user;
  } catch (e) {
    if (e instanceof KilnError && e.status === 401) return null;
    throw e;
  }
}

/** An API error as the console shows it: the message, and per field what is wrong. */
export interface ShownError {
  message: string;
  fields: Record<string, string>;
  /** The HTTP status of a refused non-public call (`call`), for a page that answers a 404 or 403 itself. */
  status?: number;
}

/**
 * A schema checker's issue as a person reads it ("must NOT have fewer than 1 characters" →
 * "is required"); an issue it does not know is kept as the API wrote it.
 */
export function humanIssue(issue: string): string {
  const rules: [RegExp, (m: RegExpExecArray) => string][] = [
    [/^must NOT have fewer than 1 (characters|items)$/, () => "is required"],
    [/^must NOT have fewer than (\d+) characters$/, (m) => `needs at least ${m[1]} characters`],
    [/^must NOT have more than (\d+) characters$/, (m) => `can have at most ${m[1]} characters`],
    [/^must NOT have fewer than (\d+) items$/, (m) => `needs at least ${m[1]}`],
    [/^must NOT have more than (\d+) items$/, (m) => `can have at most ${m[1]}`],
    [/^must have required property '(.+)'$/, () => "is required"],
    [/^is required$/, () => "is required"],
    [/^must be equal to one of the allowed values$/, () => "is not one of the choices"],
    [/^must match format "email"$/, () => "is not an email address"],
    [/^must match format "(.+)"$/, (m) => `is not a valid ${m[1]}`],
    [
      /^must be (string|number|integer|boolean|object|array)$/,
      (m) => `must be a${/^[aeiou]/.test(m[1] ?? "") ? "n" : ""} ${m[1]}`,
    ],
  ];
  for (const [pattern, say] of rules) {
    const m = pattern.exec(issue);
    if (m) return say(m);
  }
  return issue;
}

/** The API's error envelope as the console shows it: a sentence, and per field a human issue. */
function shownOf(message: string, details: readonly { field: string; issue: string }[]): ShownError {
  const fields: Record<string, string> = {};
  for (const d of details) fields[d.field] ??= humanIssue(d.issue);
  const sentence = message.charAt(0).toUpperCase() + message.slice(1);
  return {
    message: details.length > 0 && /^the request is invalid$/i.test(message) ? "Check the marked fields." : sentence,
    fields,
  };
}

export function shownError(e: unknown): ShownError {
  if (e instanceof KilnError) return shownOf(e.message, e.details);
  if (e instanceof TypeError && /fetch/i.test(e.message))
    return { message: "Kiln cannot be reached: check your connection and try again.", fields: {} };
  if (e instanceof Error) return { message: e.message, fields: {} };
  return { message: String(e), fields: {} };
}

interface Envelope {
  error?: { code: string; message: string; details?: { field: string; issue: string }[] };
}

/** A non-public route, answered as JSON or thrown as a ShownError. */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: { ...CSRF, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json().catch(() => ({}))) as T & Envelope;
  if (!response.ok) {
    const shown = shownOf(
      json.error?.message ?? `The request failed (HTTP ${response.status}).`,
      json.error?.details ?? [],
    );
    throw { ...shown, status: response.status };
  }
  return json;
}

export const isShownError = (e: unknown): e is ShownError =>
  typeof e === "object" && e !== null && "message" in e && "fields" in e;

export const errorOf = (e: unknown): ShownError => (isShownError(e) ? e : shownError(e));
