import type { RequestBody, SetupVerification } from "./resources.js";
import type { RequestOptions, Transport } from "./transport.js";

/** Setup verification (stable). */
export class Setup {
  constructor(private readonly t: Transport) {}

  /** Checks authentication and the organization, each with its verdict (a failed check is `ok: false`, not an error). */
  verify(body: RequestBody<"verifySetup"> = {}, options?: RequestOptions): Promise<SetupVerification> {
    return this.t.call((init) => this.t.api.POST("/api/setup/verify", { ...init, body }), options);
  }
}
