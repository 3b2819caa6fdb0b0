import type { Model, OnboardingResult, RequestBody, SetupVerification } from "./resources.js";
import type { RequestOptions, Transport } from "./transport.js";

/** Model discovery (stable). */
export class Models {
  constructor(private readonly t: Transport) {}

  /** Every model this deployment offers (one page: `{ data, nextCursor: null }`). */
  list(options?: RequestOptions): Promise<{ data: Model[]; nextCursor: string | null }> {
    return this.t.call((init) => this.t.api.GET("/api/models", { ...init }), options);
  }
}

/** Setup verification (stable). */
export class Setup {
  constructor(private readonly t: Transport) {}

  /** Checks authentication and the organization, each with its verdict (a failed check is `ok: false`, not an error). */
  verify(body: RequestBody<"verifySetup"> = {}, options?: RequestOptions): Promise<SetupVerification> {
    return this.t.call((init) => this.t.api.POST("/api/setup/verify", { ...init, body }), options);
  }
}

/** Onboarding of a signed-in user (an access token, not an API key). */
export class Onboarding {
  constructor(private readonly t: Transport) {}

  /** Creates the user's organization on the Free plan; a repeat call answers the same one. */
  complete(body: RequestBody<"completeOnboarding">, options?: RequestOptions): Promise<OnboardingResult> {
    return this.t.call((init) => this.t.api.POST("/api/onboarding/complete", { ...init, body }), options);
  }
}
