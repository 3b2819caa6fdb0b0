/** Who reviews (a member as a user), and a case's refusal in the words of the request that made it. */
import { DomainError, invalidArgument, permissionDenied } from "@kiln/kit/errors";
import type { Principal } from "@kiln/kit/principal";

/** The case's issues named as this request's fields: `cases[0].expectedOutput` is `expectedOutput`. */
export async function casesRenamed<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (e) {
    if (!(e instanceof DomainError) || e.kind !== "invalid_argument") throw e;
    const details = e.details.map((d) => ({ ...d, field: d.field.replace(/^cases\[0\]\.?/, "") || "itemId" }));
    throw invalidArgument(e.message, details);
  }
}

/** Reviewing is a member's: an API key or a service reads and adds, it does not review. */
export function reviewerOf(principal: Principal): string {
  if (principal.type !== "user") throw permissionDenied("only members signed in as themselves review items");
  return principal.id;
}
