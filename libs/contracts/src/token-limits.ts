/**
 * Token-per-minute limits (docs/usage.md "Token-per-minute limits"): the range an API key's or a
 * model's `tokensPerMinute` takes, shared by the gateway's route schemas, identity's and
 * execution's checks and the providers configuration.
 */

/** The largest limit: a billion tokens a minute is past any provider's quota. */
export const MAX_TOKENS_PER_MINUTE = 1_000_000_000;

/** Why `value` is not a limit (an integer in 1..MAX_TOKENS_PER_MINUTE), or undefined when it is one. */
export function tokensPerMinuteIssue(value: unknown): string | undefined {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_TOKENS_PER_MINUTE) {
    return `must be an integer from 1 to ${MAX_TOKENS_PER_MINUTE}`;
  }
  return undefined;
}
