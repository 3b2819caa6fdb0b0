import type { Model } from "./resources.js";
import type { RequestOptions, Transport } from "./transport.js";

/** Model discovery (stable). */
export class Models {
  constructor(private readonly t: Transport) {}

  /**
   * Every model this deployment offers (one page: `{ data, nextCursor: null }`); with an
   * `organizationId` (an API key: its own), that organization's provider connection models too.
   */
  list(
    options: RequestOptions & { organizationId?: string } = {},
  ): Promise<{ data: Model[]; nextCursor: string | null }> {
    const { organizationId, ...call } = options;
    const query = organizationId === undefined ? {} : { organizationId };
    return this.t.call((init) => this.t.api.GET("/api/models", { ...init, params: { query } }), call);
  }
}
