import type { Kiln } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useLoaded } from "./action.js";
import type { Session, ShownError } from "./api.js";
import { Connections } from "./connections.js";
import { perMillion } from "./model-picker.js";
import { ModelRoutes } from "./model-routes.js";
import { readOrganizationModels } from "./org-models.js";
import { DataTable, Empty, Pending } from "./ui.js";

/**
 * The Models page: every model the organization can run with its prices, then (for the admins who
 * manage them; others are told the API's refusal) its provider connections and its routes.
 */
export function Models({ kiln, session }: { kiln: Kiln; session: Session }) {
  const [error, setError] = useState<ShownError | null>(null);
  const organizationId = session.organizationId;
  const read = useCallback(() => readOrganizationModels(kiln, organizationId), [kiln, organizationId]);
  const { value: models, reload } = useLoaded(read, setError);
  if (!models) return <Pending error={error} what="models" />;
  return (
    <main>
      <h1>Models</h1>
      {models.length === 0 ? (
        <Empty>No model yet: add a connection below, or your operator configures the deployment's providers.</Empty>
      ) : (
        <DataTable
          label="Organization models"
          columns={[
            "Model",
            "Provider",
            "From",
            "Input per million tokens",
            "Output per million tokens",
            "Other prices per million",
            "State",
          ]}
        >
          {models.map((m) => (
            <tr key={m.id}>
              <td className="nowrap">{m.id}</td>
              <td>{m.provider}</td>
              <td>{m.connectionId ? "your connection" : "the deployment"}</td>
              <td className="num">{perMillion(m.pricing?.inputPerMTokUsd ?? null)}</td>
              <td className="num">{perMillion(m.pricing?.outputPerMTokUsd ?? null)}</td>
              <td>{otherPrices(m.pricing)}</td>
              <td>{m.available ? "available" : "no credentials"}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {organizationId && (
        <>
          <Connections organizationId={organizationId} onChanged={reload} />
          <ModelRoutes organizationId={organizationId} models={models} onChanged={reload} />
        </>
      )}
    </main>
  );
}

/** The prices a model has beside input and output (docs/providers.md "How usage is priced"); "—" when none is set. */
function otherPrices(
  pricing: NonNullable<Awaited<ReturnType<typeof readOrganizationModels>>[number]["pricing"]> | undefined,
) {
  if (!pricing) return "—";
  const parts = [
    pricing.cachedInputPerMTokUsd !== undefined && `cached ${perMillion(pricing.cachedInputPerMTokUsd)}`,
    pricing.cacheWritePerMTokUsd !== undefined && `cache write ${perMillion(pricing.cacheWritePerMTokUsd)}`,
    pricing.reasoningPerMTokUsd !== undefined && `reasoning ${perMillion(pricing.reasoningPerMTokUsd)}`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(" · ") : "—";
}
