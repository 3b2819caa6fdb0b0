import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { withPrincipal } from "@kiln/kit/principal";
import type { TraceRetention, TraceSettings } from "./trace-retention.js";

export type { TraceRetention } from "./trace-retention.js";

const settingsToProto = (s: TraceSettings) => ({
  organizationId: s.organizationId,
  retentionDays: s.retentionDays,
  updatedAt: s.updatedAt ? timestampFromDate(s.updatedAt) : undefined,
});

/** The TraceService's settings methods (docs/observability.md "Retention"). */
export const traceSettingsRpc = (retention: TraceRetention) => ({
  getTraceSettings: withPrincipal(async (p, req: { organizationId: string }) => ({
    settings: settingsToProto(await retention.get(p, req.organizationId)),
  })),
  updateTraceSettings: withPrincipal(async (p, req: { organizationId: string; retentionDays: number }) => ({
    settings: settingsToProto(await retention.update(p, req.organizationId, req.retentionDays)),
  })),
});
