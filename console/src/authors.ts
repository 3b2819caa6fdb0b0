import type { ApiKey, Member } from "@kiln/sdk";
import { useEffect, useState } from "react";
import { call, type Session } from "./api.js";

/** Who created a version, as the API answers it (`createdBy`). */
export type AuthorRef = { type: "user" | "api_key" | "service"; id: string } | null;

/** A principal known by its id alone (a reviewer, an assignee): its kind from the id's prefix. */
export const refOfId = (id: string): AuthorRef => ({
  type: id.startsWith("key_") ? "api_key" : id.startsWith("usr_") ? "user" : "service",
  id,
});

/**
 * Names a version's author the way a teammate reads it: "you", a member's name (else email), an
 * API key's name, "Kiln" for a service; what the console may not list (another member's keys, for
 * a member without the right) stays a plain "a member" or "an API key".
 */
export function useAuthorNames(session: Session): (author: AuthorRef) => string {
  const [members, setMembers] = useState<Member[]>([]);
  const [keys, setKeys] = useState<ApiKey[]>([]);
  useEffect(() => {
    const org = session.organizationId;
    const list = <T>(path: string, set: (items: T[]) => void) =>
      call<{ data: T[] }>("GET", path).then(
        (r) => set(r.data),
        () => set([]),
      );
    list<Member>(`/api/organizations/${org}/members`, setMembers);
    list<ApiKey>(`/api/api-keys?organizationId=${org}`, setKeys);
  }, [session]);
  return (author) => {
    if (author === null) return "—";
    if (author.type === "service") return "Kiln";
    if (author.type === "api_key") {
      const key = keys.find((k) => k.id === author.id);
      return key ? `API key “${key.name}”` : "an API key";
    }
    const member = members.find((m) => m.user.id === author.id);
    if (!member) return "a member";
    if (member.user.id === session.userId) return "you";
    return member.user.fullName || member.user.email;
  };
}
