import type { OnboardingResult, RequestBody } from "./resources.js";
import type { RequestOptions, Transport } from "./transport.js";

/** Onboarding of a signed-in user (an access token, not an API key). */
export class Onboarding {
  constructor(private readonly t: Transport) {}

  /** Creates the user's organization on the Free plan; a repeat call answers the same one. */
  complete(body: RequestBody<"completeOnboarding">, options?: RequestOptions): Promise<OnboardingResult> {
    return this.t.call((init) => this.t.api.POST("/api/onboarding/complete", { ...init, body }), options);
  }
}
