import type { Bundle, ImportReport, PromptfooImport } from "./resources.js";
import type { RequestOptions, Transport } from "./transport.js";

/**
 * Export and import (public beta, docs/bundles.md): an organization's prompts, tools, skills and
 * agents with every version, labels and evaluation cases as one `kiln.bundle/v1` document; an
 * import of a bundle or a promptfoo config, dry run first if you like.
 */
export class Bundles {
  constructor(private readonly t: Transport) {}

  /** The organization's bundle (never secrets, runs or members). */
  export(organizationId: string, options?: RequestOptions): Promise<Bundle> {
    return this.t.withId(
      organizationId,
      (init) => this.t.api.GET("/api/organizations/{id}/export", { ...init }),
      options,
    );
  }

  /**
   * Imports a bundle (as `export` answers it) or a promptfoo config (`{format: "promptfoo", config}`
   * with the YAML text or the parsed object, and `files`: the texts of the files it refers to by
   * their path relative to it). `dryRun` reports and changes nothing; a real import
   * is idempotent and applies whole or not at all (a conflict is a 409 naming each).
   */
  import(
    organizationId: string,
    body: Bundle | PromptfooImport,
    importOptions: { dryRun?: boolean } = {},
    options?: RequestOptions,
  ): Promise<ImportReport> {
    const query = importOptions.dryRun ? { dryRun: "true" as const } : {};
    const params = { path: { id: organizationId }, query };
    return this.t.call((init) => this.t.api.POST("/api/organizations/{id}/import", { ...init, params, body }), options);
  }
}
