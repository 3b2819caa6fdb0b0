import type { Kiln, Model } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useLoaded } from "./action.js";
import type { ShownError } from "./api.js";
import { perMillion } from "./model-picker.js";
import { DataTable, Empty, Pending } from "./ui.js";

/** The model catalog with prices (GET /api/models). */
export function Models({ kiln }: { kiln: Kiln }) {
  const [error, setError] = useState<ShownError | null>(null);
  const read = useCallback(async (): Promise<Model[]> => (await kiln.models.list()).data, [kiln]);
  const models = useLoaded(read, setError).value;
  if (!models) return <Pending error={error} what="models" />;
  return (
    <main>
      <h1>Models</h1>
      {models.length === 0 ? (
        <Empty>No model is configured yet: your administrator adds providers in the gateway's configuration.</Empty>
      ) : (
        <DataTable
          label="Models"
          columns={["Model", "Provider", "Input per million tokens", "Output per million tokens"]}
        >
          {models.map((m) => (
            <tr key={m.id}>
              <td className="nowrap">{m.id}</td>
              <td>{m.provider}</td>
              <td className="num">{perMillion(m.pricing?.inputPerMTokUsd ?? null)}</td>
              <td className="num">{perMillion(m.pricing?.outputPerMTokUsd ?? null)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </main>
  );
}
