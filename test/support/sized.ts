import { jsonBytes } from "@kiln/kit/limits";

/** `make(pad)` with `pad` long enough that the value's JSON text is exactly `bytes` bytes (docs/api.md "Limits"). */
export function sized<T>(bytes: number, make: (pad: string) => T): T {
  return make("a".repeat(bytes - jsonBytes(make(""))));
}

interface BundleVersion {
  id: string;
  version: number;
  systemPrompt: string;
  developerPrompt: string | null;
  [field: string]: unknown;
}

const bundleVersion = (id: string, version: number, systemPrompt: string): BundleVersion => ({
  id,
  version,
  status: "draft",
  createdAt: "2026-01-01T00:00:00.000Z",
  publishedAt: null,
  systemPrompt,
  developerPrompt: null,
  variablesSchema: { type: "object" },
  responseFormat: { type: "text" },
  temperature: null,
  maxOutputTokens: null,
  model: null,
  tools: [],
});

const bundleOf = (prompts: number) => ({
  format: "kiln.bundle/v1",
  exportedAt: "2026-01-01T00:00:00.000Z",
  organization: { id: "org_x", name: "O" },
  tools: [],
  prompts: Array.from({ length: prompts }, (_, i) => ({
    id: `prm_${i}`,
    name: `p${i}`,
    description: "",
    createdAt: "2026-01-01T00:00:00.000Z",
    labels: {},
    defaultModel: null,
    versions: [bundleVersion(`pv_${i}`, 1, "s".repeat(90_000))],
  })),
  skills: [],
  agents: [],
});

/**
 * A `kiln.bundle/v1` of prompts with 90,000-character versions whose JSON text is exactly `bytes`
 * bytes (docs/api.md "Limits": imports), and how many prompts it holds.
 */
export function bundleOfSize(bytes: number): { bundle: ReturnType<typeof bundleOf>; prompts: number } {
  const perPrompt = jsonBytes(bundleOf(2)) - jsonBytes(bundleOf(1));
  // One prompt fewer than fits: the rest (more than a prompt) goes into a second version of the first.
  const prompts = Math.floor((bytes - jsonBytes(bundleOf(0))) / perPrompt) - 1;
  const bundle = bundleOf(prompts);
  const extra = bundleVersion("pv_last", 2, "");
  extra.developerPrompt = "";
  (bundle.prompts[0] as { versions: BundleVersion[] }).versions.push(extra);
  const need = bytes - jsonBytes(bundle);
  extra.systemPrompt = "t".repeat(Math.min(need, 99_000));
  extra.developerPrompt = "u".repeat(need - extra.systemPrompt.length);
  return { bundle, prompts };
}
