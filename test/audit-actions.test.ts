/**
 * Every write the API documents is either an audited change or declared not to be one (issue #51,
 * docs/governance.md "Actions"): walks the OpenAPI document the gateway serves over HTTP, so a new
 * write route without an entry in gateway/src/audit/audit-actions.ts fails here the day it exists.
 */
import { AUDIT_ACTIONS } from "@kiln/gateway/audit/audit-actions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded } from "./support/embedded.js";

interface Document {
  paths: Record<string, Record<string, { operationId?: string; parameters?: { name: string; in: string }[] }>>;
}

const WRITES = new Set(["post", "put", "patch", "delete"]);
let stop: () => Promise<void>;
let writes: { operationId: string; path: string; params: string[] }[] = [];

beforeAll(async () => {
  const { kiln, baseUrl } = await startEmbedded();
  stop = () => kiln.close();
  const doc = (await (await fetch(`${baseUrl}/api/openapi.json`)).json()) as Document;
  writes = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([method]) => WRITES.has(method))
      .map(([, op]) => ({
        operationId: op.operationId ?? `(no operationId) ${path}`,
        path,
        params: (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name),
      })),
  );
});

afterAll(() => stop?.());

describe("audit actions", () => {
  it("the document has writes to check", () => {
    expect(writes.length).toBeGreaterThan(80);
  });

  it.each([
    "createPrompt",
    "publishPromptVersion",
    "setPromptLabel",
    "createApiKey",
    "changeMemberRole",
    "createSession",
  ])("%s is an audited change", (operationId) => {
    expect(AUDIT_ACTIONS[operationId]).toBeTruthy();
  });

  it("declares every write route of the OpenAPI document", () => {
    const missing = writes.filter((w) => !(w.operationId in AUDIT_ACTIONS)).map((w) => `${w.operationId} ${w.path}`);
    expect(missing).toEqual([]);
  });

  it("declares no operation the document lacks", () => {
    const known = new Set(writes.map((w) => w.operationId));
    expect(Object.keys(AUDIT_ACTIONS).filter((id) => !known.has(id))).toEqual([]);
  });

  it("names each action `noun(.noun).verb` and reads its target from a parameter the route has", () => {
    for (const w of writes) {
      const declared = AUDIT_ACTIONS[w.operationId];
      if (!declared) continue;
      const [action, targetType, targetId] = declared;
      expect(action, w.operationId).toMatch(/^[a-z_]+(\.[a-z_]+)+$/);
      expect(targetType, w.operationId).toMatch(/^[a-z_]+$/);
      for (const part of targetId.split("+")) {
        expect(part, w.operationId).toMatch(/^(actor|[prbq]\.[A-Za-z.]+)$/);
        if (part.startsWith("p.")) expect(w.params, `${w.operationId} reads ${part}`).toContain(part.slice(2));
      }
    }
  });
});
