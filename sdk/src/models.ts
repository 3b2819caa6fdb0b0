import type { Model } from "./resources.js";
import type { RequestOptions, Transport } from "./transport.js";

/** Model discovery (stable). */
export class Models {
  constructor(private readonly t: Transport) {}

  /** Every model this deployment offers (one page: `{ data, nextCursor: null }`). */
  list(options?: RequestOptions): Promise<{ data: Model[]; nextCursor: string | null }> {
    return this.t.call((init) => this.t.api.GET("/api/models", { ...init }), options);
  }
}
