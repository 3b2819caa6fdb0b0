import { Issues, normalizeEmail } from "./rules.js";

export interface ScimEmailInput {
  value: string;
  type: string;
  primary: boolean;
}

export interface ScimUserInput {
  externalId: string;
  userName: string;
  active: boolean;
  displayName: string;
  givenName: string;
  familyName: string;
  emails: ScimEmailInput[];
}

const MAX_EMAILS = 10;

/**
 * A provisioned user's attributes, checked: every issue at once (400), else the trimmed values, the
 * lower-cased keys the filters match on, and the e-mail address of the Kiln user (the primary
 * e-mail, else the first, else the userName when it is an address).
 */
export function checkScimUser(input: ScimUserInput) {
  const issues = new Issues();
  const userName = issues.text("userName", input.userName, { max: 254 });
  const externalId = issues.text("externalId", input.externalId, { min: 0 });
  const displayName = issues.text("displayName", input.displayName, { min: 0 });
  const givenName = issues.text("name.givenName", input.givenName, { min: 0 });
  const familyName = issues.text("name.familyName", input.familyName, { min: 0 });
  if (input.emails.length > MAX_EMAILS) issues.add("emails", `must hold at most ${MAX_EMAILS} addresses`);
  const emails = input.emails.slice(0, MAX_EMAILS).map((e, i) => {
    const one = new Issues();
    const value = normalizeEmail(one, e.value);
    if (!one.isEmpty()) issues.add(`emails[${i}].value`, "must be an e-mail address");
    return { value, type: issues.text(`emails[${i}].type`, e.type, { min: 0, max: 50 }), primary: e.primary };
  });
  const chosen = emails.find((e) => e.primary) ?? emails[0];
  let email = chosen?.value ?? "";
  if (!chosen) {
    const fromName = new Issues();
    email = normalizeEmail(fromName, userName);
    if (!fromName.isEmpty()) issues.add("emails", "must hold an e-mail address when userName is not one");
  }
  issues.throwIfAny("invalid user");
  const fullName = displayName || [givenName, familyName].filter(Boolean).join(" ");
  return {
    userName,
    userNameKey: userName.toLowerCase(),
    externalId,
    active: input.active,
    displayName,
    givenName,
    familyName,
    emails,
    emailKeys: [...new Set(emails.map((e) => e.value))],
    email,
    fullName,
  };
}
