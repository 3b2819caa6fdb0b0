/** The scopes an API key may hold (api.md "Authentication"): one vocabulary for every process. */
export const API_KEY_SCOPES = [
  "prompts:read",
  "prompts:write",
  "tools:read",
  "tools:write",
  "skills:read",
  "skills:write",
  "agents:read",
  "agents:write",
  "runs:read",
  "runs:write",
  "evaluations:read",
  "evaluations:write",
  "labels:write",
  "webhooks:read",
  "webhooks:write",
] as const;
