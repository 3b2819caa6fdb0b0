import type { Model } from "@kiln/sdk";
import { useId } from "react";

/** A price in dollars with cents at least: "$0.15", "$2.50", "$0.0375". */
export const dollars = (usd: number) =>
  `$${usd.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 4 })}`;

/** A price per million tokens as people read it: "free", "$0.15", "$2.50", "price unknown". */
export function perMillion(usd: number | null): string {
  if (usd === null) return "price unknown";
  if (usd === 0) return "free";
  return dollars(usd);
}

const priceOf = (m: Model) =>
  m.pricing.inputPerMTokUsd === 0 && m.pricing.outputPerMTokUsd === 0
    ? "free"
    : `${perMillion(m.pricing.inputPerMTokUsd)} in / ${perMillion(m.pricing.outputPerMTokUsd)} out per M tokens`;

/**
 * The model of a version, from GET /api/models: the available ones first, then those this
 * deployment has no credentials for (shown, not choosable unless the version already names one);
 * "" is the default. Under it, what the chosen model can do and costs, and what it cannot do of
 * what the version asks (tools, a JSON schema answer).
 */
export function ModelPicker({
  models,
  routes = [],
  value,
  onChange,
  needs,
}: {
  models: Model[];
  /** The organization's routes, `route/<name>` (docs/providers.md "Routes"). */
  routes?: string[];
  value: string;
  onChange: (model: string) => void;
  needs: { tools: boolean; jsonSchema: boolean };
}) {
  const id = useId();
  const available = models.filter((m) => m.available);
  const unavailable = models.filter((m) => !m.available);
  const chosen = models.find((m) => m.id === value);
  const lacks = chosen
    ? [
        needs.tools && !chosen.capabilities.tools ? "does not call tools" : "",
        needs.jsonSchema && !chosen.capabilities.jsonSchema ? "does not answer to a JSON schema" : "",
      ].filter(Boolean)
    : [];
  return (
    <div className="field">
      <label htmlFor={id}>Model</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)} aria-describedby={`${id}-about`}>
        <option value="">Default (the prompt's, else the deployment's)</option>
        <optgroup label="Available">
          {available.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id} · {priceOf(m)}
            </option>
          ))}
        </optgroup>
        {unavailable.length > 0 && (
          <optgroup label="Not available here (no credentials)">
            {unavailable.map((m) => (
              <option key={m.id} value={m.id} disabled={m.id !== value}>
                {m.id} · {priceOf(m)} · unavailable
              </option>
            ))}
          </optgroup>
        )}
        {routes.length > 0 && (
          <optgroup label="Routes">
            {routes.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </optgroup>
        )}
        {value !== "" && !chosen && !routes.includes(value) && (
          <option value={value}>{value} (not offered by this deployment)</option>
        )}
      </select>
      <span id={`${id}-about`} className={lacks.length > 0 || (chosen && !chosen.available) ? "issue" : "hint"}>
        {chosen
          ? [
              chosen.available ? "Available" : "Not available in this deployment: runs of this version fail",
              [chosen.capabilities.tools && "tools", chosen.capabilities.jsonSchema && "JSON schema answers"]
                .filter(Boolean)
                .join(" and ") || "text only",
              priceOf(chosen),
              ...lacks.map((l) => `it ${l}`),
            ].join(" · ")
          : routes.includes(value)
            ? "A route: each run tries its targets as the Models page shows them."
            : "Runs use the prompt's default model, else the deployment's."}
      </span>
    </div>
  );
}
