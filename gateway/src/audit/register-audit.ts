import type { GatewayApp, GatewayDeps } from "../http/gateway-app.js";
import { registerAuditRoutes } from "../routes/audit-routes.js";
import { registerAuditRecorder } from "./audit-recorder.js";

/** The audit log at the gateway (docs/governance.md): the recorder of every audited write, and its routes. */
export function registerAudit(app: GatewayApp, deps: GatewayDeps): void {
  registerAuditRecorder(app, deps);
  registerAuditRoutes(app, deps);
}
